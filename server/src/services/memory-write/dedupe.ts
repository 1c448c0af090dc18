import type { MemoryInsertResponse } from '@mnemo/contract';
import type { ClaimHolder } from '../../db/queries/lifecycle.js';
import type { DomainEvent } from '../../db/queries/events.js';
import { finishWrite, type NearestMemory, type Queryable } from '../../db/queries/memory-writes.js';
import {
  decideLifecycle,
  type DecisionInput,
  type LifecycleDecision,
  type TextReadings,
} from '../lifecycle/decide.js';
import { auditOf, claimOf, replayWinner } from './idempotency.js';
import { notExtracted } from './response.js';
import type { PreparedWrite, Safety, WriteResult } from './types.js';

/** How many nearest memories the dedupe and evolution passes compare against. */
export const DEDUPE_CANDIDATES = 5;

/**
 * Whether the write is already stored (a near or semantic duplicate) and, if not, how it evolves
 * what is: merged into a memory it refines, or inserted, superseding what it contradicts or
 * corrects. An exact duplicate never gets here: the lookup finds it first.
 */
export function decideWrite(
  write: PreparedWrite,
  nearest: NearestMemory[],
  claimHolders: ClaimHolder[],
  thresholds: DecisionInput['thresholds'],
  readings?: TextReadings,
): LifecycleDecision {
  return decideLifecycle({
    ...(readings ? { readings } : {}),
    text: write.request.payload.text,
    memoryType: write.memoryType,
    chunkCount: write.chunks.length,
    assessment: write.assessment,
    effectiveAt: write.effectiveAt ?? write.now,
    explicitEffectiveAt: write.effectiveAt !== null,
    ...(write.replacesId ? { replacesId: write.replacesId } : {}),
    nearest,
    claimHolders,
    thresholds,
  });
}

/** The answer of a write that found its text already stored, as `memoryId`. */
export function dedupedResponse(
  memoryId: string,
  safety: Safety,
  kind: 'near' | 'semantic' = 'near',
): MemoryInsertResponse {
  return {
    memory_id: memoryId,
    stored: true,
    deduped: true,
    dedupe_kind: kind,
    extraction: notExtracted(),
    ...safety,
  };
}

/**
 * A duplicate stores nothing: its idempotency record, audit record and `deduped` event are one
 * statement. A concurrent write that claimed the same key first wins, and this one replays its
 * response.
 */
export async function finishDuplicate(
  db: Queryable,
  write: PreparedWrite,
  response: MemoryInsertResponse,
  rule: 'exact' | 'near' | 'semantic',
): Promise<WriteResult> {
  const claim = claimOf(write, response);
  const { workspaceId } = write.request;
  const deduped: DomainEvent = { kind: 'deduped', workspaceId, memoryId: response.memory_id, rule };
  if (await finishWrite(db, workspaceId, claim, auditOf(write.request), [deduped]))
    return { response, audited: true };
  return replayWinner(db, workspaceId, claim!.key, claim!.requestHash);
}

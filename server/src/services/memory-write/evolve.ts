import type { MemoryInsertResponse } from '@mnemo/contract';
import type { DomainEvent } from '../../db/queries/events.js';
import { rewriteMemory } from '../../db/queries/lifecycle.js';
import { finishWrite } from '../../db/queries/memory-writes.js';
import type { LifecycleDecision } from '../lifecycle/decide.js';
import { auditOf, claimOf, LostIdempotencyRace } from './idempotency.js';
import { indexedFields, intelligenceOf, notExtracted } from './response.js';
import { assessedColumns, chunkRows } from './rows.js';
import type { MemoryWriteDeps, PreparedWrite, Safety } from './types.js';

export type MergeDecision = Extract<LifecycleDecision, { kind: 'merge' }>;
export type InsertDecision = Extract<LifecycleDecision, { kind: 'insert' }>;

// Evolve: the new text refines a live memory, which takes it in place and keeps its id.

/** `embedded` false: the plan's embedding budget is spent; the chunks are stored without vectors. */
export function mergedResponse(
  write: PreparedWrite,
  decision: MergeDecision,
  safety: Safety,
  embedded = true,
): MemoryInsertResponse {
  return {
    memory_id: decision.memoryId,
    stored: true,
    extraction: notExtracted(),
    ...indexedFields(write.chunks.length, embedded),
    ...safety,
    intelligence: intelligenceOf(write, false),
    trace: { memory_evolution: 'merged_into_existing', memory_evolution_applied: true },
  };
}

/**
 * One transaction: the memory's text, assessment and chunks rewritten, then the idempotency and
 * audit records and the `merged` event in one statement; {@link LostIdempotencyRace} rolls it all
 * back.
 */
export function mergeIntoExisting(
  deps: Pick<MemoryWriteDeps, 'db' | 'embeddings'>,
  write: PreparedWrite,
  decision: MergeDecision,
  vectors: number[][],
  response: MemoryInsertResponse,
): Promise<MemoryInsertResponse> {
  const { payload, workspaceId } = write.request;
  return deps.db.transaction(async (tx) => {
    await rewriteMemory(
      tx,
      decision.memoryId,
      {
        text: payload.text,
        contentHash: write.contentHash,
        ...assessedColumns(write.assessment),
        // Metadata left out of the rewrite keeps what the memory had.
        ...(payload.metadata ? { metadata: write.metadata } : {}),
      },
      chunkRows(deps.embeddings, write.space, write.chunks, vectors),
    );
    const merged: DomainEvent = {
      kind: 'merged',
      workspaceId,
      memoryId: decision.memoryId,
      rule: 'evolution',
      details: { previous_text: decision.previousText },
    };
    const audit = auditOf(write.request);
    if (!(await finishWrite(tx, workspaceId, claimOf(write, response), audit, [merged])))
      throw new LostIdempotencyRace();
    return response;
  });
}

// Supersede: the new memory replaces what it contradicts or corrects, or, stating an older value
// of a fact a newer memory holds, is itself kept as that memory's history.

/** The new memory's state: live, or replaced from the start by the newer memory. */
export function historyState(decision: InsertDecision) {
  return decision.historyOf
    ? { lifecycleState: 'replaced' as const, replacedByMemoryId: decision.historyOf.memoryId }
    : { lifecycleState: 'active' as const, replacedByMemoryId: null };
}

/** One `replaced` event per memory the new one supersedes, and one for itself when it is history. */
export function supersessionEvents(
  decision: InsertDecision,
  workspaceId: string,
  memoryId: string,
): DomainEvent[] {
  const events: DomainEvent[] = decision.supersede.map((supersession) => ({
    kind: 'replaced',
    workspaceId,
    memoryId: supersession.memoryId,
    rule: supersession.rule,
    relatedMemoryId: memoryId,
    details: supersession.details,
  }));
  if (decision.historyOf) {
    events.push({
      kind: 'replaced',
      workspaceId,
      memoryId,
      rule: 'conflict_older',
      relatedMemoryId: decision.historyOf.memoryId,
      details: decision.historyOf.details,
    });
  }
  return events;
}

/** What the answer says of supersession: the first memory replaced, or that this one is history. */
export function supersessionFields(
  decision: InsertDecision,
): Pick<MemoryInsertResponse, 'superseded_memory_id' | 'trace'> {
  const superseded = decision.supersede[0]?.memoryId;
  return {
    ...(superseded ? { superseded_memory_id: superseded } : {}),
    ...(decision.historyOf
      ? {
          trace: {
            memory_evolution: 'kept_as_history_of_newer_fact',
            memory_evolution_applied: false,
          },
        }
      : {}),
  };
}

import {
  DEFAULT_IMPORTANCE,
  type MemoryInsertPayload,
  type MemoryInsertResponse,
} from '@mnemo/contract';
import type { MemorySpace, WriteLookups, writeLookups } from '../../db/queries/memory-writes.js';
import { ServiceError } from '../../errors.js';
import { canonicalHash } from '../../text/canonical.js';
import { chunkText } from '../chunking.js';
import { assessMemory } from '../lifecycle/intelligence.js';
import { resolveOwner } from '../owner.js';
import { metadataBytes } from './budget.js';
import { DEDUPE_CANDIDATES } from './dedupe.js';
import { requestHash, reusedKey } from './idempotency.js';
import type { PreparedWrite, WriteRequest, WriteResult } from './types.js';

/** The owner and labels a write lands in; any owner type without an id is the default owner. */
export function memorySpace(workspaceId: string, payload: MemoryInsertPayload): MemorySpace {
  return {
    workspaceId,
    ...resolveOwner(payload),
    scope: payload.scope ?? null,
    namespace: payload.namespace ?? null,
    containerTag: payload.containerTag ?? null,
  };
}

/**
 * Metadata is stored with every memory (and its children) and counted by the storage cap: past
 * `maxBytes` as JSON the write is refused, 400 before anything is looked up or reserved.
 */
export function checkMetadataSize(metadata: Record<string, unknown>, maxBytes: number): void {
  const bytes = metadataBytes(metadata);
  if (bytes <= maxBytes) return;
  throw new ServiceError(
    'BAD_REQUEST',
    `metadata is ${bytes} bytes as JSON; a memory stores at most ${maxBytes}`,
    { metadata: [`must be at most ${maxBytes} bytes as JSON (UTF-8)`] },
  );
}

/** What the request says on its own: no I/O, so it all happens before the first lookup. */
export function prepareWrite(request: WriteRequest, now = new Date()): PreparedWrite {
  const { payload, workspaceId } = request;
  const idempotencyKey = payload.idempotency_key;
  const memoryType = payload.memory_type ?? 'note';
  const importance = payload.importance ?? DEFAULT_IMPORTANCE;
  const metadata = payload.metadata ?? {};
  const effectiveAt = payload.effective_at ? new Date(payload.effective_at) : null;
  return {
    request,
    space: memorySpace(workspaceId, payload),
    contentHash: canonicalHash(payload.text),
    idempotencyKey,
    requestHash: idempotencyKey ? requestHash(request) : '',
    replacesId: payload.replaces_memory_id,
    now,
    memoryType,
    importance,
    metadata,
    effectiveAt,
    assessment: assessMemory(
      { text: payload.text, memoryType, importance, metadata, effectiveAt },
      now,
    ),
    chunks: chunkText(payload.text, payload.chunk_profile ?? 'balanced'),
  };
}

/**
 * What the write's one lookup asks for. A rewrite of a memory on purpose is never a duplicate of
 * it, nor decided by what it states; the nearest memories come along when vectors already exist.
 */
export function lookupKeys(
  write: PreparedWrite,
  vectors: number[][] | undefined,
): Parameters<typeof writeLookups>[2] {
  const { replacesId } = write;
  return {
    contentHash: replacesId ? null : write.contentHash,
    idempotencyKey: write.idempotencyKey ?? null,
    replacesId: replacesId ?? null,
    claimKeys: replacesId ? [] : write.assessment.claimKeys,
    nearest:
      vectors?.[0] && !replacesId ? { embedding: vectors[0], limit: DEDUPE_CANDIDATES } : undefined,
  };
}

/**
 * Settles what the lookup can before any quota is reserved: a repeated idempotency key replays
 * the first write's response (and refuses another payload); the memory to replace must be this
 * owner's. Undefined: the write goes on.
 */
export function checkLookups(
  write: PreparedWrite,
  lookups: Pick<WriteLookups, 'idempotency' | 'replacementFound'>,
): WriteResult | undefined {
  if (write.idempotencyKey && lookups.idempotency) {
    if (lookups.idempotency.requestHash !== write.requestHash) throw reusedKey();
    return { response: lookups.idempotency.response as MemoryInsertResponse, audited: false };
  }
  if (write.replacesId && !lookups.replacementFound) throw unknownReplacement(write.replacesId);
  return undefined;
}

export function unknownReplacement(id: string): ServiceError {
  return new ServiceError('BAD_REQUEST', `replaces_memory_id ${id} is not a memory of this owner`, {
    replaces_memory_id: ['is not a memory of this owner in this workspace'],
  });
}

import { createHash } from 'node:crypto';
import type { MemoryInsertResponse } from '@mnemo/contract';
import { fencedCommit } from '../deadline-fence.js';
import {
  getIdempotencyRecord,
  type Queryable,
  type WriteAudit,
  type WriteClaim,
} from '../../db/queries/memory-writes.js';
import { DatabaseError, ServiceError } from '../../errors.js';
import type { PreparedWrite, WriteRequest, WriteResult } from './types.js';

/** Key order must not change the hash: a retry may serialise the same payload differently. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(request: Pick<WriteRequest, 'payload' | 'piiScan'>): string {
  return createHash('sha256')
    .update(stableJson({ payload: request.payload, pii: request.piiScan }))
    .digest('hex');
}

export function reusedKey(): ServiceError {
  return new ServiceError(
    'CONFLICT',
    'idempotency_key was already used with a different payload in this workspace',
    { idempotency_key: ['was already used with a different payload'] },
  );
}

/** Thrown inside the transaction when a concurrent write with the same key committed first. */
export class LostIdempotencyRace extends Error {}

/** The idempotency record a write claims along with its changes; null when it has no key. */
export function claimOf(write: PreparedWrite, response: MemoryInsertResponse): WriteClaim | null {
  return write.idempotencyKey
    ? { key: write.idempotencyKey, requestHash: write.requestHash, response }
    : null;
}

/** The request's audit record as it stands now (status 200: it is written with the write). */
export function auditOf(request: WriteRequest): WriteAudit {
  const { startedAt, ...audit } = request.audit;
  return {
    requestId: audit.requestId,
    workspaceId: audit.workspaceId ?? null,
    apiKeyId: audit.apiKeyId ?? null,
    method: audit.method,
    path: audit.path,
    route: audit.route ?? null,
    ip: audit.ip ?? null,
    userAgent: audit.userAgent ?? null,
    durationMs: Math.round(Number(process.hrtime.bigint() - startedAt) / 1e6),
  };
}

/** The response of the write that claimed the key first, which this one replays. */
export async function replayWinner(
  db: Queryable,
  workspaceId: string,
  key: string,
  hash: string,
): Promise<WriteResult> {
  const record = await getIdempotencyRecord(db, workspaceId, key);
  if (!record) throw new DatabaseError('the idempotency key was claimed, yet no record holds it');
  if (record.requestHash !== hash) throw reusedKey();
  return { response: record.response as MemoryInsertResponse, audited: false };
}

/**
 * Runs `run`, which writes the memory (or what a duplicate leaves: nothing but records), the
 * idempotency record and this request's audit record in one transaction, or throws
 * {@link LostIdempotencyRace} when a concurrent write claimed the same key first: then nothing
 * was written, and this one replays that write's response.
 */
export async function settle(
  db: Queryable,
  write: PreparedWrite,
  run: () => Promise<MemoryInsertResponse>,
): Promise<WriteResult> {
  try {
    // Fenced: a write whose request's deadline has answered 503 does not commit.
    return { response: await fencedCommit(run), audited: true };
  } catch (error) {
    const key = write.idempotencyKey;
    if (!(error instanceof LostIdempotencyRace) || !key) throw error;
    return replayWinner(db, write.request.workspaceId, key, write.requestHash);
  }
}

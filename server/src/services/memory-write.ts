import { createHash, randomUUID } from 'node:crypto';
import type { MemoryInsertPayload, MemoryInsertResponse } from '@mnemo/contract';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/client.js';
import { insertAuditRecords } from '../db/queries/audit.js';
import {
  claimIdempotencyKey,
  findLiveByContentHash,
  findNearestLiveMemories,
  getIdempotencyRecord,
  insertMemoryWithChunks,
  lockMemoryOfOwner,
  lockSpaceContent,
  markReplaced,
  type MemorySpace,
  type Queryable,
} from '../db/queries/memory-writes.js';
import type { NewAuditRecord } from '../db/schema/index.js';
import { ApiError } from '../http/errors.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
import { EmbeddingError } from '../providers/embeddings/index.js';
import { canonicalHash, lexicalSimilarity } from '../text/canonical.js';
import { scanPii } from '../text/pii.js';
import { chunkText } from './chunking.js';
import { resolveOwner } from './owner.js';
import type { QuotaGate } from './quota.js';

/** How many nearest memories the semantic dedupe pass compares against. */
const DEDUPE_CANDIDATES = 5;

export interface MemoryWriteDeps {
  db: Database;
  embeddings: EmbeddingProvider;
  quota: QuotaGate;
  config: Pick<AppConfig, 'dedupe'>;
  /** Told how many rows a committed write added, to keep planner statistics fresh. */
  onRowsWritten?: (rows: number) => void;
}

export interface WriteRequest {
  workspaceId: string;
  payload: MemoryInsertPayload;
  /** `x-safety-pii-scan: 1` */
  piiScan: boolean;
  /** This request's audit record, written in the same transaction as the memory. */
  audit: Omit<NewAuditRecord, 'status' | 'durationMs'> & { startedAt: bigint };
}

export interface WriteResult {
  response: MemoryInsertResponse;
  /** False when nothing was written (an idempotent replay): the caller audits as usual. */
  audited: boolean;
}

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

function requestHash(request: WriteRequest): string {
  return createHash('sha256')
    .update(stableJson({ payload: request.payload, pii: request.piiScan }))
    .digest('hex');
}

function reusedKey(): ApiError {
  return new ApiError(
    'CONFLICT',
    'idempotency_key was already used with a different payload in this workspace',
    { idempotency_key: ['was already used with a different payload'] },
  );
}

/** Thrown inside the transaction when a concurrent write with the same key committed first. */
class LostIdempotencyRace extends Error {}

function extractionOutcome(payload: MemoryInsertPayload): MemoryInsertResponse['extraction'] {
  // Extraction into child memories is not built yet: nothing runs, and the reason says whether
  // the caller turned it off.
  return payload.extract === false
    ? { status: 'skipped', reason: 'user_disabled' }
    : { status: 'skipped', reason: 'none' };
}

/**
 * POST /v1/memories: idempotency → owner space → chunking → quota reservation → embedding →
 * dedupe → one transaction (supersession, memory + chunks, idempotency record, audit) → commit
 * of the reservation.
 */
export async function writeMemory(deps: MemoryWriteDeps, request: WriteRequest): Promise<WriteResult> {
  const { payload, workspaceId } = request;
  const idempotencyKey = payload.idempotency_key;
  const hash = idempotencyKey ? requestHash(request) : '';
  if (idempotencyKey) {
    const replay = await replayIdempotent(deps.db, workspaceId, idempotencyKey, hash);
    if (replay) return { response: replay, audited: false };
  }

  const space = memorySpace(workspaceId, payload);
  const contentHash = canonicalHash(payload.text);
  const replacesId = payload.replaces_memory_id;
  if (replacesId && !(await lockMemoryOfOwner(deps.db, space, replacesId))) throw unknownReplacement(replacesId);

  const extraction = extractionOutcome(payload);
  const piiHints = request.piiScan ? scanPii(payload.text) : [];
  const safety = piiHints.length > 0 ? { safety: { pii_hints: piiHints } } : {};

  // A rewrite of a memory on purpose is never a duplicate of it.
  if (!replacesId) {
    const exact = await findLiveByContentHash(deps.db, space, contentHash);
    if (exact) {
      const response = dedupedResponse(exact.id, extraction, safety);
      return commitWrite(deps.db, request, idempotencyKey, hash, async () => response);
    }
  }

  const chunks = chunkText(payload.text, payload.chunk_profile ?? 'balanced');
  const reservation = await deps.quota.reserve({ workspaceId, writes: 1, embeds: chunks.length });
  try {
    const vectors = await embed(deps.embeddings, chunks);

    if (!replacesId && vectors[0]) {
      const duplicate = await findDuplicate(deps, space, payload.text, chunks.length, vectors[0]);
      if (duplicate) {
        const response = dedupedResponse(duplicate.memoryId, extraction, safety, duplicate.kind);
        const result = await commitWrite(deps.db, request, idempotencyKey, hash, async () => response);
        await reservation.release();
        return result;
      }
    }

    const memoryId = randomUUID();
    const response: MemoryInsertResponse = {
      memory_id: memoryId,
      stored: true,
      extraction,
      chunks: chunks.length,
      ...safety,
      intelligence: {
        canonical_hash: contentHash,
        auto_pinned: payload.memory_type === 'pin',
        conflict_state: replacesId ? 'resolved' : 'none',
      },
      ...(replacesId ? { superseded_memory_id: replacesId } : {}),
    };

    const result = await commitWrite(deps.db, request, idempotencyKey, hash, async (tx) => {
      if (!replacesId) {
        await lockSpaceContent(tx, space, contentHash);
        const raced = await findLiveByContentHash(tx, space, contentHash);
        if (raced) return dedupedResponse(raced.id, extraction, safety);
      } else if (!(await lockMemoryOfOwner(tx, space, replacesId))) {
        throw unknownReplacement(replacesId);
      }
      await insertMemoryWithChunks(
        tx,
        {
          id: memoryId,
          ...space,
          text: payload.text,
          metadata: payload.metadata ?? {},
          memoryType: payload.memory_type ?? 'note',
          importance: payload.importance ?? 1,
          chunkProfile: payload.chunk_profile ?? 'balanced',
          effectiveAt: payload.effective_at ? new Date(payload.effective_at) : null,
          contentHash,
          idempotencyKey: idempotencyKey ?? null,
        },
        chunks.map((text, chunkIndex) => ({
          workspaceId,
          ownerId: space.ownerId,
          ownerType: space.ownerType,
          chunkIndex,
          text,
          embedding: vectors[chunkIndex] ?? null,
          embeddingProvider: deps.embeddings.provider,
          embeddingDimension: deps.embeddings.dimension,
          embeddingVersion: deps.embeddings.version,
        })),
      );
      if (replacesId) await markReplaced(tx, replacesId, memoryId);
      return response;
    });
    await (result.response.deduped ? reservation.release() : reservation.commit());
    if (!result.response.deduped && result.audited) deps.onRowsWritten?.(1 + chunks.length);
    return result;
  } catch (error) {
    await reservation.release();
    throw error;
  }
}

function unknownReplacement(id: string): ApiError {
  return new ApiError('BAD_REQUEST', `replaces_memory_id ${id} is not a memory of this owner`, {
    replaces_memory_id: ['is not a memory of this owner in this workspace'],
  });
}

function dedupedResponse(
  memoryId: string,
  extraction: MemoryInsertResponse['extraction'],
  safety: Pick<MemoryInsertResponse, 'safety'>,
  kind: 'near' | 'semantic' = 'near',
): MemoryInsertResponse {
  return { memory_id: memoryId, stored: true, deduped: true, dedupe_kind: kind, extraction, ...safety };
}

async function embed(provider: EmbeddingProvider, chunks: string[]): Promise<number[][]> {
  try {
    return await provider.embed(chunks, 'document');
  } catch (error) {
    if (error instanceof EmbeddingError) {
      // Nothing was written; the caller may retry. Upstream failures are not the caller's fault.
      throw new ApiError('INTERNAL', `Embedding failed: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Near: the words (and word pairs) overlap at least `nearThreshold` (Jaccard). Semantic: the
 * embeddings of two single-chunk memories are at least `semanticThreshold` alike (cosine); for
 * longer texts a first-chunk match says nothing about the rest, so only the near test applies.
 */
async function findDuplicate(
  deps: MemoryWriteDeps,
  space: MemorySpace,
  text: string,
  chunkCount: number,
  firstVector: number[],
): Promise<{ memoryId: string; kind: 'near' | 'semantic' } | undefined> {
  const { nearThreshold, semanticThreshold } = deps.config.dedupe;
  const candidates = await findNearestLiveMemories(deps.db, space, firstVector, DEDUPE_CANDIDATES);
  for (const candidate of candidates) {
    if (lexicalSimilarity(text, candidate.text) >= nearThreshold) {
      return { memoryId: candidate.memoryId, kind: 'near' };
    }
  }
  if (chunkCount !== 1) return undefined;
  const best = candidates.find((candidate) => candidate.chunkCount === 1);
  if (best && best.similarity >= semanticThreshold) return { memoryId: best.memoryId, kind: 'semantic' };
  return undefined;
}

async function replayIdempotent(
  db: Queryable,
  workspaceId: string,
  key: string,
  hash: string,
): Promise<MemoryInsertResponse | undefined> {
  const record = await getIdempotencyRecord(db, workspaceId, key);
  if (!record) return undefined;
  if (record.requestHash !== hash) throw reusedKey();
  return record.response as MemoryInsertResponse;
}

/**
 * One transaction: `write` (which may decide the write is a duplicate after all), the
 * idempotency record and this request's audit record. A concurrent write that claimed the same
 * idempotency key first wins: this one rolls back and replays its response.
 */
async function commitWrite(
  db: Database,
  request: WriteRequest,
  idempotencyKey: string | undefined,
  hash: string,
  write: (tx: Queryable) => Promise<MemoryInsertResponse>,
): Promise<WriteResult> {
  try {
    const response = await db.transaction(async (tx) => {
      const final = await write(tx);
      if (idempotencyKey) {
        const claimed = await claimIdempotencyKey(tx, {
          workspaceId: request.workspaceId,
          key: idempotencyKey,
          requestHash: hash,
          response: final,
        });
        if (!claimed) throw new LostIdempotencyRace();
      }
      const { startedAt, ...audit } = request.audit;
      await insertAuditRecords(tx, [
        { ...audit, status: 200, durationMs: Math.round(Number(process.hrtime.bigint() - startedAt) / 1e6) },
      ]);
      return final;
    });
    return { response, audited: true };
  } catch (error) {
    if (!(error instanceof LostIdempotencyRace) || !idempotencyKey) throw error;
    const replay = await replayIdempotent(db, request.workspaceId, idempotencyKey, hash);
    if (!replay) throw error;
    return { response: replay, audited: false };
  }
}

import { createHash, randomUUID } from 'node:crypto';
import type { MemoryInsertPayload, MemoryInsertResponse } from '@mnemo/contract';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/client.js';
import {
  findNearestLiveMemories,
  finishWrite,
  getIdempotencyRecord,
  insertChildMemories,
  insertMemory,
  insertMemoryLocked,
  lockMemoryOfOwner,
  lockSpaceContent,
  writeLookups,
  type InsertOutcome,
  type LifecycleEventRow,
  type NewMemoryWrite,
  type MemorySpace,
  type Queryable,
  type WriteAudit,
  type WriteClaim,
} from '../db/queries/memory-writes.js';
import { insertLifecycleEvents, rewriteMemory } from '../db/queries/lifecycle.js';
import type { NewAuditRecord } from '../db/schema/index.js';
import { ServiceError } from '../errors.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
import { EmbeddingError } from '../providers/embeddings/index.js';
import { LocalEmbeddingProvider } from '../providers/embeddings/local.js';
import { canonicalHash } from '../text/canonical.js';
import { scanPii } from '../text/pii.js';
import { chunkText } from './chunking.js';
import { decideLifecycle } from './lifecycle/decide.js';
import {
  ExtractionError,
  type ExtractedMemory,
  type Extractor,
} from './lifecycle/extraction/types.js';
import { assessMemory, type MemoryAssessment } from './lifecycle/intelligence.js';
import { resolveOwner } from './owner.js';
import type { QuotaGate } from './quota.js';

/** How many nearest memories the dedupe and evolution passes compare against. */
const DEDUPE_CANDIDATES = 5;

export interface MemoryWriteDeps {
  db: Database;
  embeddings: EmbeddingProvider;
  quota: QuotaGate;
  config: Pick<AppConfig, 'dedupe'>;
  /** Splits memories into children; undefined: extraction does not run. */
  extractor?: Extractor | undefined;
  /** Told how many rows a committed write added, to keep planner statistics fresh. */
  onRowsWritten?: (rows: number) => void;
}

export interface WriteRequest {
  workspaceId: string;
  payload: MemoryInsertPayload;
  /** `x-safety-pii-scan: 1` */
  piiScan: boolean;
  /** This request's audit record, written in the same transaction as the memory. */
  audit: Pick<
    NewAuditRecord,
    'requestId' | 'workspaceId' | 'apiKeyId' | 'method' | 'path' | 'ip' | 'userAgent'
  > & {
    startedAt: bigint;
  };
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

function reusedKey(): ServiceError {
  return new ServiceError(
    'CONFLICT',
    'idempotency_key was already used with a different payload in this workspace',
    { idempotency_key: ['was already used with a different payload'] },
  );
}

/** Thrown inside the transaction when a concurrent write with the same key committed first. */
class LostIdempotencyRace extends Error {}

/** Below this importance a memory is not worth splitting into children. */
export const MIN_IMPORTANCE_TO_EXTRACT = 0.1;
/** The spec's cap on child memories per write. */
export const MAX_CHILDREN = 10;

interface Extraction {
  outcome: MemoryInsertResponse['extraction'];
  children: ExtractedMemory[];
}

/** Runs before the transaction (a model call must not hold it open); never fails the write. */
async function extract(deps: MemoryWriteDeps, payload: MemoryInsertPayload): Promise<Extraction> {
  if (payload.extract === false)
    return { outcome: { status: 'skipped', reason: 'user_disabled' }, children: [] };
  if ((payload.importance ?? 1) < MIN_IMPORTANCE_TO_EXTRACT) {
    return { outcome: { status: 'skipped', reason: 'low_importance' }, children: [] };
  }
  if (!deps.extractor) return { outcome: { status: 'skipped', reason: 'none' }, children: [] };
  try {
    const found = await deps.extractor.extract(payload.text, { maxItems: MAX_CHILDREN });
    const parent = canonicalHash(payload.text);
    const seen = new Set<string>([parent]);
    const children = found.filter((child) => {
      const hash = canonicalHash(child.text);
      if (seen.has(hash)) return false;
      seen.add(hash);
      return true;
    });
    return { outcome: { status: 'run' }, children: children.slice(0, MAX_CHILDREN) };
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error;
    return {
      outcome: { status: 'degraded', reason: 'extraction_error', error: error.message },
      children: [],
    };
  }
}

function intelligence(
  assessment: MemoryAssessment,
  contentHash: string,
  resolved: boolean,
): MemoryIntelligenceBody {
  return {
    canonical_hash: contentHash,
    confidence: assessment.confidence,
    source_weight: assessment.sourceWeight,
    priority_score: assessment.priorityScore,
    priority_tier: assessment.priorityTier,
    auto_pinned: assessment.pinned,
    conflict_state: resolved ? 'resolved' : 'none',
  };
}

type MemoryIntelligenceBody = NonNullable<MemoryInsertResponse['intelligence']>;

/** The columns a write derives from the text and payload. */
export function assessedColumns(assessment: MemoryAssessment) {
  return {
    confidence: assessment.confidence,
    volatility: assessment.volatility,
    expiresAt: assessment.expiresAt,
    claims: assessment.claims,
    claimKeys: assessment.claimKeys,
    pinned: assessment.pinned,
    sourceWeight: assessment.sourceWeight,
    priorityScore: assessment.priorityScore,
  };
}

/**
 * POST /v1/memories: owner space → assessment (confidence, volatility, claims) → chunking →
 * (in-process embedder: embedding) → one lookup (idempotency replay, the memory to replace, exact
 * duplicate, memories holding the same claims, nearest memories) → quota reservation → (remote
 * embedder: embedding, nearest memories) → lifecycle decision (dedupe, conflict, correction,
 * evolution) → extraction (children embedded in one batch) → one transaction (supersessions,
 * memory + chunks, children + links, lifecycle events, idempotency record, audit) → commit of
 * the reservation.
 *
 * On PostgreSQL a new memory costs five statements in two round trips: the lookup (with the
 * nearest memories when the embedder runs in-process; a statement of its own otherwise), then
 * `begin`, the lock, one statement writing everything and `commit`, sent together.
 */
export async function writeMemory(
  deps: MemoryWriteDeps,
  request: WriteRequest,
): Promise<WriteResult> {
  const { payload, workspaceId } = request;
  const idempotencyKey = payload.idempotency_key;
  const hash = idempotencyKey ? requestHash(request) : '';
  const space = memorySpace(workspaceId, payload);
  const contentHash = canonicalHash(payload.text);
  const replacesId = payload.replaces_memory_id;

  const now = new Date();
  const memoryType = payload.memory_type ?? 'note';
  const importance = payload.importance ?? 1;
  const metadata = payload.metadata ?? {};
  const effectiveAt = payload.effective_at ? new Date(payload.effective_at) : null;
  const assessment = assessMemory(
    { text: payload.text, memoryType, importance, metadata, effectiveAt },
    now,
  );

  const chunks = chunkText(payload.text, payload.chunk_profile ?? 'balanced');
  // An in-process embedder costs less than a round trip: embed first and fetch the nearest
  // memories with the lookups. A remote one runs only once the write is known to need it, after
  // the quota reservation.
  const early = embedsInProcess(deps.embeddings) ? await embed(deps.embeddings, chunks) : undefined;
  // A rewrite of a memory on purpose is never a duplicate of it, nor decided by what it states.
  const lookups = await writeLookups(deps.db, space, {
    contentHash: replacesId ? null : contentHash,
    idempotencyKey: idempotencyKey ?? null,
    replacesId: replacesId ?? null,
    claimKeys: replacesId ? [] : assessment.claimKeys,
    nearest:
      early?.[0] && !replacesId ? { embedding: early[0], limit: DEDUPE_CANDIDATES } : undefined,
  });
  if (idempotencyKey && lookups.idempotency) {
    if (lookups.idempotency.requestHash !== hash) throw reusedKey();
    return { response: lookups.idempotency.response as MemoryInsertResponse, audited: false };
  }
  if (replacesId && !lookups.replacementFound) throw unknownReplacement(replacesId);

  const claim = (response: MemoryInsertResponse): WriteClaim | null =>
    idempotencyKey ? { key: idempotencyKey, requestHash: hash, response } : null;
  const piiHints = request.piiScan ? scanPii(payload.text) : [];
  const safety = piiHints.length > 0 ? { safety: { pii_hints: piiHints } } : {};
  const notExtracted: MemoryInsertResponse['extraction'] = { status: 'skipped', reason: 'none' };

  if (lookups.duplicateId) {
    const response = dedupedResponse(lookups.duplicateId, notExtracted, safety);
    return finishDuplicate(deps.db, request, claim(response), response);
  }

  const reservation = await deps.quota.reserve({ workspaceId, writes: 1, embeds: chunks.length });
  try {
    const parentVectors = early ?? (await embed(deps.embeddings, chunks));
    const nearest =
      early || !parentVectors[0] || replacesId
        ? lookups.nearest
        : await findNearestLiveMemories(deps.db, space, parentVectors[0], DEDUPE_CANDIDATES);
    const decision = decideLifecycle({
      text: payload.text,
      memoryType,
      chunkCount: chunks.length,
      assessment,
      effectiveAt: effectiveAt ?? now,
      explicitEffectiveAt: effectiveAt !== null,
      ...(replacesId ? { replacesId } : {}),
      nearest,
      claimHolders: lookups.claimHolders,
      thresholds: deps.config.dedupe,
    });

    const chunkRows = (texts: string[], rowVectors: number[][]) =>
      texts.map((text, chunkIndex) => ({
        workspaceId,
        ownerId: space.ownerId,
        ownerType: space.ownerType,
        chunkIndex,
        text,
        embedding: rowVectors[chunkIndex] ?? null,
        embeddingProvider: deps.embeddings.provider,
        embeddingDimension: deps.embeddings.dimension,
        embeddingVersion: deps.embeddings.version,
      }));

    let result: WriteResult;
    let rowsWritten = 0;
    if (decision.kind === 'dedupe') {
      const response = dedupedResponse(
        decision.memoryId,
        notExtracted,
        safety,
        decision.dedupeKind,
      );
      result = await finishDuplicate(deps.db, request, claim(response), response);
    } else if (decision.kind === 'merge') {
      const response: MemoryInsertResponse = {
        memory_id: decision.memoryId,
        stored: true,
        extraction: notExtracted,
        chunks: chunks.length,
        ...safety,
        intelligence: intelligence(assessment, contentHash, false),
        trace: { memory_evolution: 'merged_into_existing', memory_evolution_applied: true },
      };
      result = await settle(deps.db, request, () =>
        deps.db.transaction(async (tx) => {
          await rewriteMemory(
            tx,
            decision.memoryId,
            {
              text: payload.text,
              contentHash,
              ...assessedColumns(assessment),
              ...(payload.metadata ? { metadata } : {}),
            },
            chunkRows(chunks, parentVectors),
          );
          await insertLifecycleEvents(tx, [
            {
              workspaceId,
              memoryId: decision.memoryId,
              event: 'merged',
              rule: 'evolution',
              details: { previous_text: decision.previousText },
            },
          ]);
          if (!(await finishWrite(tx, workspaceId, claim(response), auditOf(request))))
            throw new LostIdempotencyRace();
          return response;
        }),
      );
      rowsWritten = chunks.length;
    } else {
      // Extraction only for memories that will be stored: a model call is the costly part.
      const extraction = await extract(deps, payload);
      const childChunks = extraction.children.map((child) => chunkText(child.text, 'balanced'));
      const childVectors =
        childChunks.length > 0 ? await embed(deps.embeddings, childChunks.flat()) : [];
      const memoryId = randomUUID();
      const superseded = decision.supersede.map((s) => s.memoryId);
      const response: MemoryInsertResponse = {
        memory_id: memoryId,
        stored: true,
        extraction: extraction.outcome,
        chunks: chunks.length,
        ...safety,
        intelligence: intelligence(
          assessment,
          contentHash,
          superseded.length > 0 || decision.historyOf !== undefined,
        ),
        ...(superseded[0] ? { superseded_memory_id: superseded[0] } : {}),
        ...(decision.historyOf
          ? {
              trace: {
                memory_evolution: 'kept_as_history_of_newer_fact',
                memory_evolution_applied: false,
              },
            }
          : {}),
      };
      const historyOf = decision.historyOf
        ? { lifecycleState: 'replaced' as const, replacedByMemoryId: decision.historyOf.memoryId }
        : { lifecycleState: 'active' as const, replacedByMemoryId: null };
      const events: LifecycleEventRow[] = decision.supersede.map((supersession) => ({
        memoryId: supersession.memoryId,
        event: 'replaced',
        rule: supersession.rule,
        relatedMemoryId: memoryId,
        details: supersession.details,
      }));
      if (decision.historyOf) {
        events.push({
          memoryId,
          event: 'replaced',
          rule: 'conflict_older',
          relatedMemoryId: decision.historyOf.memoryId,
          details: decision.historyOf.details,
        });
      }
      const children = extraction.children.map((child, i) => {
        const texts = childChunks[i] ?? [];
        const offset = childChunks.slice(0, i).reduce((sum, list) => sum + list.length, 0);
        const childAssessment = assessMemory(
          {
            text: child.text,
            memoryType: child.memoryType,
            importance,
            metadata,
            effectiveAt,
            extracted: true,
          },
          now,
        );
        const id = randomUUID();
        return {
          memory: {
            id,
            ...space,
            text: child.text,
            metadata,
            memoryType: child.memoryType,
            importance,
            effectiveAt,
            contentHash: canonicalHash(child.text),
            parentMemoryId: memoryId,
            ...assessedColumns(childAssessment),
            ...(decision.historyOf ? historyOf : {}),
          },
          chunks: chunkRows(texts, childVectors.slice(offset, offset + texts.length)),
        };
      });

      const write: NewMemoryWrite = {
        space,
        memory: {
          id: memoryId,
          text: payload.text,
          metadata,
          memoryType,
          importance,
          chunkProfile: payload.chunk_profile ?? 'balanced',
          effectiveAt,
          contentHash,
          ...assessedColumns(assessment),
          ...historyOf,
        },
        chunks: {
          texts: chunks,
          vectors: parentVectors,
          provider: deps.embeddings.provider,
          dimension: deps.embeddings.dimension,
          version: deps.embeddings.version,
        },
        supersede: superseded,
        events,
        recheck: !replacesId,
        dedupedResponse: dedupedResponse('', notExtracted, safety),
        claim: claim(response),
        audit: auditOf(request),
      };
      const answer = (outcome: InsertOutcome): MemoryInsertResponse => {
        if (outcome.kind === 'lost_claim') throw new LostIdempotencyRace();
        return outcome.kind === 'raced'
          ? dedupedResponse(outcome.memoryId, notExtracted, safety)
          : response;
      };
      result =
        !replacesId && children.length === 0
          ? await settle(deps.db, request, async () =>
              answer(await insertMemoryLocked(deps.db, write)),
            )
          : await settle(deps.db, request, () =>
              deps.db.transaction(async (tx) => {
                if (replacesId) {
                  if (!(await lockMemoryOfOwner(tx, space, replacesId)))
                    throw unknownReplacement(replacesId);
                } else {
                  await lockSpaceContent(tx, space, contentHash);
                }
                const outcome = await insertMemory(tx, write);
                if (outcome.kind === 'inserted' && children.length > 0) {
                  await insertChildMemories(tx, workspaceId, memoryId, children);
                  await insertLifecycleEvents(
                    tx,
                    children.map(({ memory }) => ({
                      workspaceId,
                      memoryId: memory.id,
                      event: 'extracted',
                      rule: `extractor:${deps.extractor?.name ?? 'none'}`,
                      relatedMemoryId: memoryId,
                      details: {},
                    })),
                  );
                }
                return answer(outcome);
              }),
            );
      rowsWritten = 1 + chunks.length + extraction.children.length + childChunks.flat().length;
    }
    await (result.response.deduped ? reservation.release() : reservation.commit());
    if (rowsWritten > 0 && result.audited) deps.onRowsWritten?.(rowsWritten);
    return result;
  } catch (error) {
    await reservation.release();
    throw error;
  }
}

/** Embedding happens in this process (no network, no cost): the local embedder and its kin. */
const embedsInProcess = (provider: EmbeddingProvider) => provider instanceof LocalEmbeddingProvider;

function unknownReplacement(id: string): ServiceError {
  return new ServiceError('BAD_REQUEST', `replaces_memory_id ${id} is not a memory of this owner`, {
    replaces_memory_id: ['is not a memory of this owner in this workspace'],
  });
}

function dedupedResponse(
  memoryId: string,
  extraction: MemoryInsertResponse['extraction'],
  safety: Pick<MemoryInsertResponse, 'safety'>,
  kind: 'near' | 'semantic' = 'near',
): MemoryInsertResponse {
  return {
    memory_id: memoryId,
    stored: true,
    deduped: true,
    dedupe_kind: kind,
    extraction,
    ...safety,
  };
}

async function embed(provider: EmbeddingProvider, chunks: string[]): Promise<number[][]> {
  try {
    return await provider.embed(chunks, 'document');
  } catch (error) {
    if (error instanceof EmbeddingError) {
      // Nothing was written; the caller may retry. Upstream failures are not the caller's fault.
      throw new ServiceError('INTERNAL', `Embedding failed: ${error.message}`);
    }
    throw error;
  }
}

/** The request's audit record as it stands now (status 200: it is written with the write). */
function auditOf(request: WriteRequest): WriteAudit {
  const { startedAt, ...audit } = request.audit;
  return {
    requestId: audit.requestId,
    workspaceId: audit.workspaceId ?? null,
    apiKeyId: audit.apiKeyId ?? null,
    method: audit.method,
    path: audit.path,
    ip: audit.ip ?? null,
    userAgent: audit.userAgent ?? null,
    durationMs: Math.round(Number(process.hrtime.bigint() - startedAt) / 1e6),
  };
}

/** The response of the write that claimed the key first, which this one replays. */
async function replayWinner(
  db: Queryable,
  request: WriteRequest,
  key: string,
  hash: string,
): Promise<WriteResult> {
  const record = await getIdempotencyRecord(db, request.workspaceId, key);
  if (!record) throw new Error('the idempotency key was claimed, yet no record holds it');
  if (record.requestHash !== hash) throw reusedKey();
  return { response: record.response as MemoryInsertResponse, audited: false };
}

/**
 * A duplicate stores nothing: its idempotency record and audit record are one statement. A
 * concurrent write that claimed the same key first wins, and this one replays its response.
 */
async function finishDuplicate(
  db: Queryable,
  request: WriteRequest,
  claim: WriteClaim | null,
  response: MemoryInsertResponse,
): Promise<WriteResult> {
  if (await finishWrite(db, request.workspaceId, claim, auditOf(request)))
    return { response, audited: true };
  return replayWinner(db, request, claim!.key, claim!.requestHash);
}

/**
 * Runs `write`, which writes the memory (or what a duplicate leaves: nothing but records), the
 * idempotency record and this request's audit record in one transaction, or throws
 * {@link LostIdempotencyRace} when a concurrent write claimed the same key first: then nothing
 * was written, and this one replays that write's response.
 */
async function settle(
  db: Queryable,
  request: WriteRequest,
  write: () => Promise<MemoryInsertResponse>,
): Promise<WriteResult> {
  try {
    return { response: await write(), audited: true };
  } catch (error) {
    const key = request.payload.idempotency_key;
    if (!(error instanceof LostIdempotencyRace) || !key) throw error;
    return replayWinner(db, request, key, requestHash(request));
  }
}

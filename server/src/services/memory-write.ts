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
  linkMemories,
  lockSpaceContent,
  type MemorySpace,
  type Queryable,
} from '../db/queries/memory-writes.js';
import {
  findClaimHolders,
  insertLifecycleEvents,
  markMemoryState,
  rewriteMemory,
} from '../db/queries/lifecycle.js';
import type { NewAuditRecord, NewMemoryLifecycleEvent } from '../db/schema/index.js';
import { ApiError } from '../http/errors.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
import { EmbeddingError } from '../providers/embeddings/index.js';
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
 * POST /v1/memories: idempotency → owner space → assessment (confidence, volatility, claims) →
 * exact dedupe → chunking → quota reservation → extraction → embedding (memory and children in
 * one batch) → lifecycle decision (dedupe, conflict, correction, evolution) → one transaction
 * (supersessions, memory + chunks, children + links, lifecycle events, idempotency record,
 * audit) → commit of the reservation.
 */
export async function writeMemory(
  deps: MemoryWriteDeps,
  request: WriteRequest,
): Promise<WriteResult> {
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
  if (replacesId && !(await lockMemoryOfOwner(deps.db, space, replacesId)))
    throw unknownReplacement(replacesId);

  const now = new Date();
  const memoryType = payload.memory_type ?? 'note';
  const importance = payload.importance ?? 1;
  const metadata = payload.metadata ?? {};
  const effectiveAt = payload.effective_at ? new Date(payload.effective_at) : null;
  const assessment = assessMemory(
    { text: payload.text, memoryType, importance, metadata, effectiveAt },
    now,
  );
  const piiHints = request.piiScan ? scanPii(payload.text) : [];
  const safety = piiHints.length > 0 ? { safety: { pii_hints: piiHints } } : {};
  const notExtracted: MemoryInsertResponse['extraction'] = { status: 'skipped', reason: 'none' };

  // A rewrite of a memory on purpose is never a duplicate of it.
  if (!replacesId) {
    const exact = await findLiveByContentHash(deps.db, space, contentHash);
    if (exact) {
      const response = dedupedResponse(exact.id, notExtracted, safety);
      return commitWrite(deps.db, request, idempotencyKey, hash, async () => response);
    }
  }

  const chunks = chunkText(payload.text, payload.chunk_profile ?? 'balanced');
  const reservation = await deps.quota.reserve({ workspaceId, writes: 1, embeds: chunks.length });
  try {
    const parentVectors = await embed(deps.embeddings, chunks);

    const [nearest, claimHolders] = await Promise.all([
      parentVectors[0]
        ? findNearestLiveMemories(deps.db, space, parentVectors[0], DEDUPE_CANDIDATES)
        : Promise.resolve([]),
      findClaimHolders(deps.db, space, assessment.claimKeys),
    ]);
    const decision = decideLifecycle({
      text: payload.text,
      memoryType,
      chunkCount: chunks.length,
      assessment,
      effectiveAt: effectiveAt ?? now,
      explicitEffectiveAt: effectiveAt !== null,
      ...(replacesId ? { replacesId } : {}),
      nearest,
      claimHolders,
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
      result = await commitWrite(deps.db, request, idempotencyKey, hash, async () => response);
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
      result = await commitWrite(deps.db, request, idempotencyKey, hash, async (tx) => {
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
        return response;
      });
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
      result = await commitWrite(deps.db, request, idempotencyKey, hash, async (tx) => {
        if (!replacesId) {
          await lockSpaceContent(tx, space, contentHash);
          const raced = await findLiveByContentHash(tx, space, contentHash);
          if (raced) return dedupedResponse(raced.id, notExtracted, safety);
        } else if (!(await lockMemoryOfOwner(tx, space, replacesId))) {
          throw unknownReplacement(replacesId);
        }
        await insertMemoryWithChunks(
          tx,
          {
            id: memoryId,
            ...space,
            text: payload.text,
            metadata,
            memoryType,
            importance,
            chunkProfile: payload.chunk_profile ?? 'balanced',
            effectiveAt,
            contentHash,
            idempotencyKey: idempotencyKey ?? null,
            ...assessedColumns(assessment),
            ...(decision.historyOf
              ? { lifecycleState: 'replaced', replacedByMemoryId: decision.historyOf.memoryId }
              : {}),
          },
          chunkRows(chunks, parentVectors),
        );
        const events: NewMemoryLifecycleEvent[] = [];
        for (const supersession of decision.supersede) {
          await markMemoryState(tx, supersession.memoryId, 'replaced', memoryId);
          events.push({
            workspaceId,
            memoryId: supersession.memoryId,
            event: 'replaced',
            rule: supersession.rule,
            relatedMemoryId: memoryId,
            details: supersession.details,
          });
        }
        if (decision.historyOf) {
          events.push({
            workspaceId,
            memoryId,
            event: 'replaced',
            rule: 'conflict_older',
            relatedMemoryId: decision.historyOf.memoryId,
            details: decision.historyOf.details,
          });
        }
        let offset = 0;
        for (const [i, child] of extraction.children.entries()) {
          const texts = childChunks[i] ?? [];
          const childId = randomUUID();
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
          await insertMemoryWithChunks(
            tx,
            {
              id: childId,
              ...space,
              text: child.text,
              metadata,
              memoryType: child.memoryType,
              importance,
              effectiveAt,
              contentHash: canonicalHash(child.text),
              parentMemoryId: memoryId,
              ...assessedColumns(childAssessment),
              ...(decision.historyOf
                ? { lifecycleState: 'replaced', replacedByMemoryId: decision.historyOf.memoryId }
                : {}),
            },
            chunkRows(texts, childVectors.slice(offset, offset + texts.length)),
          );
          offset += texts.length;
          await linkMemories(tx, workspaceId, memoryId, childId, 'extracted');
          events.push({
            workspaceId,
            memoryId: childId,
            event: 'extracted',
            rule: `extractor:${deps.extractor?.name ?? 'none'}`,
            relatedMemoryId: memoryId,
            details: {},
          });
        }
        await insertLifecycleEvents(tx, events);
        return response;
      });
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
      throw new ApiError('INTERNAL', `Embedding failed: ${error.message}`);
    }
    throw error;
  }
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
        {
          ...audit,
          status: 200,
          durationMs: Math.round(Number(process.hrtime.bigint() - startedAt) / 1e6),
        },
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

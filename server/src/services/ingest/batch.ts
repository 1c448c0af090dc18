import type { MemoryInsertPayload, MemoryInsertResponse } from '@mnemo/contract';
import type { ClaimHolder } from '../../db/queries/lifecycle.js';
import { TextReadings } from '../lifecycle/decide.js';
import {
  batchLookups,
  BatchRaced,
  insertBatch,
  type BatchWrite,
} from '../../db/queries/memory-batch.js';
import type { NearestMemory, WriteLookups } from '../../db/queries/memory-writes.js';
import { ServiceError } from '../../errors.js';
import { fencedCommit } from '../deadline-fence.js';
import { storedBytes, writeAiWork } from '../memory-write/budget.js';
import { mergedResponse } from '../memory-write/evolve.js';
import { assessedColumns } from '../memory-write/rows.js';
import { DEDUPE_CANDIDATES, decideWrite, dedupedResponse } from '../memory-write/dedupe.js';
import { embed } from '../memory-write/embed.js';
import { cosineOfHalves } from '../../db/queries/vector.js';
import { halfVector, type HalfVector } from '../../db/schema/index.js';
import { auditOf, claimOf } from '../memory-write/idempotency.js';
import { extractAndPlan } from '../memory-write/insert.js';
import { safetyOf } from '../memory-write/response.js';
import type {
  MemoryWriteDeps,
  PreparedWrite,
  WriteRequest,
  WriteResult,
} from '../memory-write/types.js';
import { checkMetadataSize, prepareWrite } from '../memory-write/validate.js';
import { estimateEmbedTokens } from '../ai-cost.js';
import type { UsageAmounts } from '../quota.js';

/** What {@link writeBatch} wrote: the results of the items it took, in order, from the first. */
export interface BatchOutcome {
  results: WriteResult[];
  /**
   * False when the batch gave way to a refusal or a concurrent write: the items left are then
   * written one by one, so each gets the answer a write of its own gets.
   */
  keepBatching: boolean;
  /** The item after `results` is one the batch leaves: write it alone before batching again. */
  aloneNext?: boolean;
}

/** A memory the batch stores, as the lookups of its later items would have found it. */
export interface Stored {
  id: string;
  /** False once superseded by a later item, or stored as history: no longer a live memory. */
  live: boolean;
  /** A child of one of the batch's memories (its rows are written with its parent's). */
  child: boolean;
  /**
   * A memory stored before the batch that an item merged into: its place among the stored
   * memories holding a claim (their order) is not known here.
   */
  storedBefore: boolean;
  contentHash: string;
  text: string;
  /** The first chunk's vector as stored (half precision); undefined without one. */
  vector: HalfVector | undefined;
  chunkCount: number;
  holder: ClaimHolder;
  claimKeys: string[];
}

const GIVE_WAY: BatchOutcome = { results: [], keepBatching: false };

/**
 * Writes a prefix of `items` (of one ingest request, all in one space) as one batch,
 * with the answers per-item writes would give: one embedder call, one lookup statement for all,
 * one reservation, and one transaction (the locks, then one statement with every row).
 *
 * Each item is decided against what is stored plus the items before it in the batch (exact,
 * near and semantic duplicates of an earlier item, its claims), less what the items before it
 * superseded or rewrote, as a write of its own would be. An item that supersedes a memory
 * (stored, or an earlier item's), is kept as a newer one's history or merges into a memory is
 * written with the batch: the statement stores an earlier item as the later ones left it, and
 * updates a stored memory.
 * The batch ends before a replacement, a repeated key, a key reused with another payload, an item
 * refused on its own, or one whose decision the batch cannot make as a write of its own would
 * (its lookup lost candidates to the batch's changes; a memory merged into was stored before and
 * holds its claims, or is to be superseded; the memory to merge into is a child): the caller
 * writes that item alone and batches again from the next. A refused reservation,
 * an embedder failure or a concurrent write that took a key or a text first leaves the whole
 * batch unwritten (`keepBatching` false). Faults propagate; nothing of the batch is written then.
 */
export async function writeBatch(
  deps: MemoryWriteDeps,
  request: Omit<WriteRequest, 'payload'>,
  items: readonly BatchItem[],
): Promise<BatchOutcome> {
  const taken = batchable(deps, request, items);
  const writes = taken.map((item) => item.write!);
  if (writes.length < 2) return { results: [], keepBatching: true, aloneNext: true };
  const space = writes[0]!.space;

  let vectors: number[][][] | undefined;
  try {
    if (deps.embeddings.inProcess) vectors = await embedEach(deps, taken);
  } catch (error) {
    if (error instanceof ServiceError) return GIVE_WAY;
    throw error;
  }
  const reserving = deps.quota.reserve({
    workspaceId: request.workspaceId,
    ...reserved(deps, writes),
  });
  reserving.catch(() => undefined);
  const giveBack = () =>
    reserving.then(
      (reservation) => reservation.release(),
      () => undefined,
    );
  let lookups: WriteLookups[];
  try {
    lookups = await lookup(deps, writes, vectors);
    if (!vectors) {
      // A remote embedder embeds only what the lookup did not settle, in one call.
      const settled = lookups.map(
        (l) => l.idempotency !== undefined || l.duplicateId !== undefined,
      );
      vectors = await embedEach(deps, taken, settled);
      const nearest = await lookup(deps, writes, vectors);
      lookups = lookups.map((l, i) => ({ ...l, nearest: nearest[i]!.nearest }));
    }
  } catch (error) {
    await giveBack();
    if (error instanceof ServiceError) return GIVE_WAY;
    throw error;
  }
  let reservation;
  try {
    reservation = await reserving;
  } catch (error) {
    if (error instanceof ServiceError) return GIVE_WAY;
    throw error;
  }

  try {
    const batch: BatchWrite = {
      space,
      memories: [],
      supersessions: [],
      merges: [],
      claims: [],
      events: [],
      audits: [],
    };
    const results: WriteResult[] = [];
    const stored: Stored[] = [];
    // Memories stored before the batch that an item of it supersedes or merges into: the lookup
    // saw them as they were.
    const changed = new Set<string>();
    const keys = new Set<string>();
    const used = {
      writes: 0,
      storageBytes: 0,
      embedded: [] as string[],
      extractions: 0,
      genTokens: 0,
    };
    let rows = 0;
    let aloneNext = false;
    // The batch's texts come back as the nearest memories of its later items.
    const readings = new TextReadings();
    for (const [index, write] of writes.entries()) {
      const found = lookups[index]!;
      const safety = safetyOf(write.request);
      const key = write.idempotencyKey;
      if (key && found.idempotency) {
        if (found.idempotency.requestHash !== write.requestHash) {
          aloneNext = true;
          break;
        }
        results.push({
          response: found.idempotency.response as MemoryInsertResponse,
          audited: false,
        });
        continue;
      }
      if (key) {
        if (keys.has(key)) {
          aloneNext = true;
          break;
        }
        keys.add(key);
      }
      const recordDuplicate = (
        response: MemoryInsertResponse,
        rule: 'exact' | 'near' | 'semantic',
      ) => {
        const claim = claimOf(write, response);
        if (claim) batch.claims.push(claim);
        batch.audits.push(auditOf(write.request));
        const { workspaceId } = write.request;
        batch.events.push({ kind: 'deduped', workspaceId, memoryId: response.memory_id, rule });
        results.push({ response, audited: true });
      };
      const current = liveLookups(found, changed);
      if (!current) {
        aloneNext = true;
        break;
      }
      const exact =
        current.duplicateId ??
        stored.find((s) => s.live && s.contentHash === write.contentHash)?.id;
      if (exact) {
        recordDuplicate(dedupedResponse(exact, safety), 'exact');
        continue;
      }
      const itemVectors = vectors![index]!;
      const first = itemVectors[0];
      const nearest = first ? nearestWithBatch(current.nearest, stored, first) : [];
      const held = stored.filter(
        (s) => s.live && s.claimKeys.some((k) => write.assessment.claimKeys.includes(k)),
      );
      if (held.some((s) => s.storedBefore)) {
        aloneNext = true;
        break;
      }
      const holders = [...current.claimHolders, ...held.map((s) => s.holder)].slice(
        0,
        CLAIM_HOLDERS,
      );
      const decision = decideWrite(write, nearest, holders, deps.config.dedupe, readings);
      if (decision.kind === 'dedupe') {
        recordDuplicate(
          dedupedResponse(decision.memoryId, safety, decision.dedupeKind),
          decision.dedupeKind,
        );
        continue;
      }
      if (decision.kind === 'merge') {
        const target = stored.find((s) => s.id === decision.memoryId);
        if (target?.child) {
          aloneNext = true;
          break;
        }
        const { payload, workspaceId } = write.request;
        const response = mergedResponse(write, decision, safety);
        batch.merges.push({
          memoryId: decision.memoryId,
          ord: batch.memories.length,
          text: payload.text,
          contentHash: write.contentHash,
          assessed: assessedColumns(write.assessment),
          // Metadata left out of the write keeps what the memory had.
          metadata: payload.metadata ? write.metadata : undefined,
          chunks: {
            texts: write.chunks,
            vectors: itemVectors,
            provider: deps.embeddings.provider,
            dimension: deps.embeddings.dimension,
            version: deps.embeddings.version,
          },
        });
        const claim = claimOf(write, response);
        if (claim) batch.claims.push(claim);
        batch.events.push({
          kind: 'merged',
          workspaceId,
          memoryId: decision.memoryId,
          rule: 'evolution',
          details: { previous_text: decision.previousText },
        });
        batch.audits.push(auditOf(write.request));
        results.push({ response, audited: true });
        rows += write.chunks.length;
        used.writes += 1;
        used.storageBytes += Math.max(
          0,
          storedBytes(payload.text, payload.metadata) - storedBytes(decision.previousText),
        );
        used.embedded.push(...write.chunks);
        const now = storedOf(write, decision.memoryId, itemVectors, true);
        if (target) {
          const { effectiveAt, createdAt } = target.holder;
          Object.assign(target, {
            ...now,
            storedBefore: target.storedBefore,
            holder: { ...now.holder, effectiveAt, createdAt },
          });
        } else {
          changed.add(decision.memoryId);
          stored.push({ ...now, storedBefore: true });
        }
        continue;
      }
      // A stored memory merged into and superseded by the batch would be updated twice by its
      // statement.
      const mergedBefore = (id: string) => stored.some((s) => s.id === id && s.storedBefore);
      if (decision.supersede.some((s) => mergedBefore(s.memoryId))) {
        aloneNext = true;
        break;
      }

      const { plan, extraction, childTexts } = await extractAndPlan(
        deps,
        write,
        decision,
        itemVectors,
        safety,
        { embedded: true },
      );
      const ord = batch.memories.length;
      for (const { memoryId } of decision.supersede) {
        batch.supersessions.push({ memoryId, by: plan.memoryId, ord });
        const earlier = stored.find((s) => s.id === memoryId);
        if (earlier) earlier.live = false;
        else changed.add(memoryId);
      }
      batch.memories.push(plan.memory);
      if (plan.memory.claim) batch.claims.push(plan.memory.claim);
      batch.events.push(...plan.memory.events);
      batch.audits.push(plan.memory.audit);
      results.push({ response: plan.response, audited: true });
      rows += plan.rows;
      // A memory kept as history (its children too) is not live from the start.
      const live = plan.memory.memory.lifecycleState === 'active';
      stored.push(storedOf(write, plan.memoryId, itemVectors, live));
      for (const child of plan.children) {
        const vector = child.chunks[0]?.embedding ?? undefined;
        stored.push({
          id: child.memory.id,
          live,
          child: true,
          storedBefore: false,
          contentHash: child.memory.contentHash,
          text: child.memory.text,
          vector: vector ? halfVector(vector) : undefined,
          chunkCount: child.chunks.length,
          claimKeys: child.memory.claimKeys ?? [],
          holder: {
            id: child.memory.id,
            text: child.memory.text,
            claims: child.memory.claims ?? [],
            effectiveAt: child.memory.effectiveAt ?? null,
            createdAt: write.now,
            confidence: child.memory.confidence ?? null,
          },
        });
      }
      used.writes += 1;
      used.storageBytes += storedBytes(write.request.payload.text, write.metadata);
      used.embedded.push(...write.chunks, ...childTexts);
      if (extraction.outcome.status !== 'skipped') {
        const cost = writeAiWork(deps.extractor, write.request.payload, write.chunks).extraction;
        used.extractions += cost?.extractionCalls ?? 0;
        used.genTokens += cost?.genTokens ?? 0;
      }
    }
    if (results.length === 0) {
      await reservation.release();
      return { results, keepBatching: true, aloneNext };
    }
    if (batch.claims.length + batch.audits.length > 0) {
      try {
        await fencedCommit(() => insertBatch(deps.db, batch));
      } catch (error) {
        if (error instanceof BatchRaced || error instanceof ServiceError) {
          await reservation.release();
          return GIVE_WAY;
        }
        throw error;
      }
    }
    const consumed: UsageAmounts = {
      writes: used.writes,
      storageBytes: used.storageBytes,
      embeds: used.embedded.length,
      embedTokens: estimateEmbedTokens(used.embedded),
      extractionCalls: used.extractions,
      genTokens: used.genTokens,
    };
    await (used.writes > 0 ? reservation.commit(consumed) : reservation.release());
    if (rows > 0) deps.onRowsWritten?.(rows);
    return { results, keepBatching: true, aloneNext };
  } catch (error) {
    await reservation.release();
    if (error instanceof ServiceError) return GIVE_WAY;
    throw error;
  }
}

/** The lookup keeps the oldest 50 memories holding a write's claims. */
const CLAIM_HOLDERS = 50;

/**
 * Nearest memories the batch's lookup asks for: more than a write compares against, so that
 * after taking out those the batch superseded there are usually still as many as it would see.
 */
const NEAREST_LOOKED_UP = 2 * DEDUPE_CANDIDATES;

/**
 * An item's lookup less the stored memories the batch superseded or merged into before it (the
 * batch's own list holds the merged ones as they are now): what its own lookup would find of the
 * rest. Undefined when that cannot be told from what was looked up (the exact duplicate changed,
 * or a list the lookup cut short lost members): the item is then written alone.
 */
function liveLookups(found: WriteLookups, changed: ReadonlySet<string>): WriteLookups | undefined {
  const nearest = found.nearest.filter((n) => !changed.has(n.memoryId));
  const claimHolders = found.claimHolders.filter((h) => !changed.has(h.id));
  if (found.duplicateId && changed.has(found.duplicateId)) return undefined;
  if (nearest.length < DEDUPE_CANDIDATES && found.nearest.length >= NEAREST_LOOKED_UP)
    return undefined;
  if (claimHolders.length < found.claimHolders.length && found.claimHolders.length >= CLAIM_HOLDERS)
    return undefined;
  return { ...found, nearest: nearest.slice(0, DEDUPE_CANDIDATES), claimHolders };
}

/** An item of an ingest request, with what a batch worked out for it (kept for the next batch). */
export interface BatchItem {
  payload: MemoryInsertPayload;
  write?: PreparedWrite;
  /** Its chunks' vectors, once embedded. */
  vectors?: number[][];
}

/**
 * The leading items a batch can take: prepared, in the first item's space, no replacement, none
 * refused on its own (each of those is written alone, with its own answer).
 */
function batchable(
  deps: MemoryWriteDeps,
  request: Omit<WriteRequest, 'payload'>,
  items: readonly BatchItem[],
): BatchItem[] {
  const taken: BatchItem[] = [];
  for (const item of items) {
    const { payload } = item;
    if (payload.replaces_memory_id) break;
    try {
      checkMetadataSize(payload.metadata ?? {}, deps.config.metadataMaxBytes);
      item.write ??= prepareWrite({ ...request, payload });
    } catch (error) {
      if (error instanceof ServiceError) break;
      throw error;
    }
    if (taken[0] && JSON.stringify(item.write.space) !== JSON.stringify(taken[0].write!.space))
      break;
    taken.push(item);
  }
  return taken;
}

/** What the batch reserves: every item as a write of its own would. */
function reserved(deps: MemoryWriteDeps, writes: readonly PreparedWrite[]): UsageAmounts {
  const total: Required<UsageAmounts> = {
    writes: 0,
    reads: 0,
    embeds: 0,
    embedTokens: 0,
    extractionCalls: 0,
    genTokens: 0,
    storageBytes: 0,
  };
  for (const write of writes) {
    const { payload } = write.request;
    const work = writeAiWork(deps.extractor, payload, write.chunks);
    total.writes += 1;
    total.storageBytes += storedBytes(payload.text, write.metadata);
    total.embeds += work.embedding?.embeds ?? 0;
    total.embedTokens += work.embedding?.embedTokens ?? 0;
    total.extractionCalls += work.extraction?.extractionCalls ?? 0;
    total.genTokens += work.extraction?.genTokens ?? 0;
  }
  const { reads: _reads, ...amounts } = total;
  return amounts;
}

/**
 * Every item's chunks embedded in one call (none for the items `skip` marks, nor for those
 * embedded by an earlier batch of the request), by item.
 */
async function embedEach(
  deps: MemoryWriteDeps,
  items: readonly BatchItem[],
  skip: readonly boolean[] = [],
): Promise<number[][][]> {
  const missing = items.filter((item, i) => !skip[i] && !item.vectors);
  const texts = missing.flatMap((item) => item.write!.chunks);
  const flat = texts.length > 0 ? await embed(deps.embeddings, texts) : [];
  let offset = 0;
  for (const item of missing) {
    const count = item.write!.chunks.length;
    item.vectors = flat.slice(offset, offset + count);
    offset += count;
  }
  return items.map((item, i) => (skip[i] ? [] : item.vectors!));
}

function lookup(
  deps: MemoryWriteDeps,
  writes: readonly PreparedWrite[],
  vectors: number[][][] | undefined,
): Promise<WriteLookups[]> {
  return batchLookups(
    deps.db,
    writes[0]!.space,
    writes.map((write, i) => ({
      contentHash: write.contentHash,
      idempotencyKey: write.idempotencyKey ?? null,
      claimKeys: write.assessment.claimKeys,
      embedding: vectors?.[i]?.[0],
    })),
    NEAREST_LOOKED_UP,
  );
}

function storedOf(write: PreparedWrite, id: string, vectors: number[][], live: boolean): Stored {
  const { assessment } = write;
  const first = vectors[0];
  return {
    id,
    live,
    child: false,
    storedBefore: false,
    contentHash: write.contentHash,
    text: write.request.payload.text,
    vector: first ? halfVector(first) : undefined,
    chunkCount: write.chunks.length,
    claimKeys: assessment.claimKeys,
    holder: {
      id,
      text: write.request.payload.text,
      claims: assessment.claims,
      effectiveAt: write.effectiveAt,
      createdAt: write.now,
      confidence: assessment.confidence,
    },
  };
}

/**
 * The nearest memories of a write: the stored ones the lookup found, and the batch's earlier
 * live memories, compared as the database compares them (half-precision vectors, cosine).
 */
export function nearestWithBatch(
  fromDatabase: NearestMemory[],
  stored: readonly Stored[],
  embedding: number[],
): NearestMemory[] {
  if (stored.length === 0) return fromDatabase;
  const query = halfVector(embedding);
  // The first DEDUPE_CANDIDATES of the list sorted by similarity (a stable sort: ties keep the
  // list's order), kept as the list goes by instead of sorting all of it.
  const nearest: NearestMemory[] = [];
  const consider = (candidate: NearestMemory): boolean => {
    if (Number.isNaN(candidate.similarity)) return false;
    let at = nearest.length;
    while (at > 0 && nearest[at - 1]!.similarity < candidate.similarity) at -= 1;
    if (at < DEDUPE_CANDIDATES) {
      nearest.splice(at, 0, candidate);
      if (nearest.length > DEDUPE_CANDIDATES) nearest.pop();
    }
    return true;
  };
  for (const memory of fromDatabase)
    if (!consider(memory)) return sortedNearest(fromDatabase, stored, query);
  for (const s of stored) {
    if (!s.live || s.vector === undefined) continue;
    const similarity = cosineOfHalves(query, s.vector);
    const last = nearest[DEDUPE_CANDIDATES - 1];
    // Not nearer than the last kept: a stable sort would put it after.
    if (last && similarity <= last.similarity) continue;
    const candidate = { memoryId: s.id, text: s.text, similarity, chunkCount: s.chunkCount };
    if (!consider(candidate)) return sortedNearest(fromDatabase, stored, query);
  }
  return nearest;
}

/** {@link nearestWithBatch} by sorting the whole list: what it does when a similarity is NaN. */
function sortedNearest(
  fromDatabase: NearestMemory[],
  stored: readonly Stored[],
  query: HalfVector,
): NearestMemory[] {
  const fromBatch = stored
    .filter((s) => s.live && s.vector !== undefined)
    .map((s) => ({
      memoryId: s.id,
      text: s.text,
      similarity: cosineOfHalves(query, s.vector!),
      chunkCount: s.chunkCount,
    }));
  return [...fromDatabase, ...fromBatch]
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, DEDUPE_CANDIDATES);
}

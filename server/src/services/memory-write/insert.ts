import { randomUUID } from 'node:crypto';
import type { MemoryInsertResponse } from '@mnemo/contract';
import {
  insertMemory,
  insertMemoryLocked,
  lockMemoryOfOwner,
  type ChildMemoryWrite,
  type InsertOutcome,
  type NewMemoryWrite,
} from '../../db/queries/memory-writes.js';
import type { DomainEvent } from '../../db/queries/events.js';
import { canonicalHash } from '../../text/canonical.js';
import { assessMemory } from '../lifecycle/intelligence.js';
import { dedupedResponse } from './dedupe.js';
import {
  historyState,
  supersessionEvents,
  supersessionFields,
  type InsertDecision,
} from './evolve.js';
import { chunkChildren, extract, type Extraction, type ExtractionRefusal } from './extract.js';
import { embed } from './embed.js';
import { auditOf, claimOf, LostIdempotencyRace } from './idempotency.js';
import { indexedFields, intelligenceOf } from './response.js';
import { assessedColumns, chunkRows } from './rows.js';
import type { MemoryWriteDeps, PreparedWrite, Safety } from './types.js';
import { unknownReplacement } from './validate.js';

/** The extraction with each child's chunks and their vectors (all children's, in one list). */
export interface EmbeddedExtraction extends Extraction {
  childChunks: string[][];
  childVectors: number[][];
}

/** A new memory ready to write: every row, and what to answer. */
export interface PlannedInsert {
  memoryId: string;
  memory: NewMemoryWrite;
  children: ChildMemoryWrite[];
  response: MemoryInsertResponse;
  /** Answers a write that lost a race to an identical one. */
  safety: Safety;
  /** Rows the write adds when it commits: memories and chunks, parent and children. */
  rows: number;
}

/**
 * Extracts the children of a memory about to be stored, embeds their chunks (unless `embedded` is
 * false) and plans every row: the part of a write between its decision and its transaction.
 * `childTexts`: the children's chunks embedded, for metering.
 */
export async function extractAndPlan(
  deps: Parameters<typeof planInsert>[0],
  write: PreparedWrite,
  decision: InsertDecision,
  vectors: number[][],
  safety: Safety,
  options: { embedded: boolean; extractionRefused?: ExtractionRefusal | undefined },
): Promise<{ plan: PlannedInsert; extraction: Extraction; childTexts: string[] }> {
  // Extraction only for memories that will be stored: a model call is the costly part.
  const extraction = await extract(
    deps.extractor,
    write.request.payload,
    options.extractionRefused,
  );
  const childChunks = chunkChildren(extraction.children);
  const childTexts = options.embedded ? childChunks.flat() : [];
  const childVectors = childTexts.length > 0 ? await embed(deps.embeddings, childTexts) : [];
  const plan = planInsert(
    deps,
    write,
    decision,
    { ...extraction, childChunks, childVectors },
    vectors,
    safety,
    options.embedded,
  );
  return { plan, extraction, childTexts };
}

/**
 * Builds every row of a new memory and its children; writes nothing. `embedded` false: the plan's
 * embedding budget is spent, and the chunks (the children's too) are stored without vectors.
 */
export function planInsert(
  deps: Pick<MemoryWriteDeps, 'embeddings' | 'extractor'> & {
    config: Pick<MemoryWriteDeps['config'], 'episodeWindowSeconds'>;
  },
  write: PreparedWrite,
  decision: InsertDecision,
  extraction: EmbeddedExtraction,
  vectors: number[][],
  safety: Safety,
  embedded = true,
): PlannedInsert {
  const { request, space, chunks, metadata, importance, effectiveAt, now } = write;
  const { childChunks, childVectors } = extraction;
  const memoryId = randomUUID();
  const response: MemoryInsertResponse = {
    memory_id: memoryId,
    stored: true,
    extraction: extraction.outcome,
    ...indexedFields(chunks.length, embedded),
    ...safety,
    intelligence: intelligenceOf(
      write,
      decision.supersede.length > 0 || decision.historyOf !== undefined,
    ),
    ...supersessionFields(decision),
  };
  const history = historyState(decision);
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
        language: write.assessment.language,
      },
      now,
    );
    return {
      memory: {
        id: randomUUID(),
        ...space,
        text: child.text,
        metadata,
        memoryType: child.memoryType,
        importance,
        effectiveAt,
        contentHash: canonicalHash(child.text),
        parentMemoryId: memoryId,
        ...assessedColumns(childAssessment),
        // Children of a memory kept as history are history too.
        ...(decision.historyOf ? history : {}),
      },
      chunks: chunkRows(
        deps.embeddings,
        space,
        texts,
        childVectors.slice(offset, offset + texts.length),
      ),
    };
  });

  const memory: NewMemoryWrite = {
    space,
    memory: {
      id: memoryId,
      text: request.payload.text,
      metadata,
      memoryType: write.memoryType,
      importance,
      chunkProfile: request.payload.chunk_profile ?? 'balanced',
      effectiveAt,
      contentHash: write.contentHash,
      ...assessedColumns(write.assessment),
      ...history,
    },
    chunks: {
      texts: chunks,
      vectors,
      ...(embedded
        ? {
            provider: deps.embeddings.provider,
            dimension: deps.embeddings.dimension,
            version: deps.embeddings.version,
          }
        : { provider: null, dimension: null, version: null }),
      // The turn it answers: the memory written just before it in the same episode.
      predecessorWindowSeconds: deps.config.episodeWindowSeconds,
    },
    supersede: decision.supersede.map((s) => s.memoryId),
    events: [
      { kind: 'created', workspaceId: space.workspaceId, memoryId, rule: 'write' },
      ...supersessionEvents(decision, space.workspaceId, memoryId),
      ...children.map(({ memory: child }): DomainEvent => ({
        kind: 'extracted',
        workspaceId: space.workspaceId,
        memoryId: child.id,
        rule: `extractor:${deps.extractor?.name ?? 'none'}`,
        relatedMemoryId: memoryId,
      })),
    ],
    // The memory is the one the statement finds raced in; this id is never stored.
    racedEvents: [
      { kind: 'deduped', workspaceId: space.workspaceId, memoryId, rule: 'concurrent' },
    ],
    children,
    // A replacement rewrites on purpose: another memory with its text does not make it a duplicate.
    recheck: !write.replacesId,
    dedupedResponse: dedupedResponse('', safety),
    claim: claimOf(write, response),
    audit: auditOf(request),
  };
  return {
    memoryId,
    memory,
    children,
    response,
    safety,
    rows: 1 + chunks.length + extraction.children.length + childChunks.flat().length,
  };
}

/**
 * Writes a planned memory, its children included: the lock and one statement in a transaction of
 * their own, sent in one round trip; a replacement locks the memory it replaces first, and needs
 * the lock's answer before it writes.
 */
export function insertPlanned(
  deps: Pick<MemoryWriteDeps, 'db'>,
  write: PreparedWrite,
  plan: PlannedInsert,
): Promise<MemoryInsertResponse> {
  if (!write.replacesId) return insertAlone(deps, plan);
  const replacesId = write.replacesId;
  return deps.db.transaction(async (tx) => {
    if (!(await lockMemoryOfOwner(tx, write.space, replacesId)))
      throw unknownReplacement(replacesId);
    return answer(plan, await insertMemory(tx, plan.memory));
  });
}

async function insertAlone(
  deps: Pick<MemoryWriteDeps, 'db'>,
  plan: PlannedInsert,
): Promise<MemoryInsertResponse> {
  return answer(plan, await insertMemoryLocked(deps.db, plan.memory));
}

/** An identical write that committed first makes this one its duplicate. */
function answer(plan: PlannedInsert, outcome: InsertOutcome): MemoryInsertResponse {
  if (outcome.kind === 'lost_claim') throw new LostIdempotencyRace();
  return outcome.kind === 'raced' ? dedupedResponse(outcome.memoryId, plan.safety) : plan.response;
}

import { and, desc, eq, gte, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { memories, memoryChunks } from '../schema/index.js';
import { cosineDistanceTo, embeddingDimensionIs } from './vector.js';

type Scalar = string | number | boolean | null;

/** Whose memories a search may see, and which of them. */
export interface RecallFilter {
  workspaceId: string;
  ownerId: string;
  ownerType: string;
  /** Undefined: any. */
  scope?: string;
  namespace?: string;
  containerTag?: string;
  memoryTypes?: string[];
  metadata?: Record<string, Scalar>;
  metadataMode?: 'and' | 'or';
  createdFrom?: Date;
  createdTo?: Date;
}

/** A recalled chunk with what ranking needs to know about its memory. */
export interface RecalledChunk {
  chunkId: string;
  memoryId: string;
  chunkIndex: number;
  text: string;
  memoryType: string;
  importance: number;
  confidence: number | null;
  feedbackScore: number;
  pinned: boolean;
  sourceWeight: number;
  createdAt: Date;
  effectiveAt: Date | null;
  /** Vector recall: cosine similarity (-1..1). Keyword recall: ts_rank_cd normalised to 0..1. */
  score: number;
}

function recallConditions(filter: RecallFilter): SQL[] {
  const conditions: Array<SQL | undefined> = [
    // Chunk-side owner columns first: they are what the (workspace, owner) index serves.
    eq(memoryChunks.workspaceId, filter.workspaceId),
    eq(memoryChunks.ownerType, filter.ownerType),
    eq(memoryChunks.ownerId, filter.ownerId),
    // Owner conditions stay on the chunk side only: repeating them on the memory side makes the
    // planner multiply their selectivities, expect one row, and join by scanning the workspace's
    // memories per chunk. Alone, they lead to one primary-key lookup per recalled chunk.
    // Replaced and archived memories never come back; neither do expired ones the hygiene job
    // has not archived yet.
    eq(memories.lifecycleState, 'active'),
    or(isNull(memories.expiresAt), sql`${memories.expiresAt} > now()`),
  ];
  if (filter.scope !== undefined) conditions.push(eq(memories.scope, filter.scope));
  if (filter.namespace !== undefined) conditions.push(eq(memories.namespace, filter.namespace));
  if (filter.containerTag !== undefined) conditions.push(eq(memories.containerTag, filter.containerTag));
  if (filter.memoryTypes?.length) conditions.push(inArray(memories.memoryType, filter.memoryTypes));
  const entries = Object.entries(filter.metadata ?? {});
  if (entries.length > 0) {
    const matches = entries.map(([key, value]) => sql`${memories.metadata} @> ${JSON.stringify({ [key]: value })}::jsonb`);
    conditions.push(filter.metadataMode === 'or' ? or(...matches) : and(...matches));
  }
  if (filter.createdFrom) conditions.push(gte(memories.createdAt, filter.createdFrom));
  if (filter.createdTo) conditions.push(lte(memories.createdAt, filter.createdTo));
  return conditions.filter((condition): condition is SQL => condition !== undefined);
}

const recalledColumns = {
  chunkId: memoryChunks.id,
  memoryId: memoryChunks.memoryId,
  chunkIndex: memoryChunks.chunkIndex,
  text: memoryChunks.text,
  memoryType: memories.memoryType,
  importance: memories.importance,
  confidence: memories.confidence,
  feedbackScore: memories.feedbackScore,
  pinned: memories.pinned,
  sourceWeight: memories.sourceWeight,
  createdAt: memories.createdAt,
  effectiveAt: memories.effectiveAt,
};

/** Nearest chunks by cosine, among chunks embedded with the query's dimension only. */
export function vectorRecallQuery(db: Database, filter: RecallFilter, embedding: number[], limit: number) {
  const distance = cosineDistanceTo(embedding);
  return db
    .select({ ...recalledColumns, distance })
    .from(memoryChunks)
    .innerJoin(memories, eq(memories.id, memoryChunks.memoryId))
    .where(and(...recallConditions(filter), embeddingDimensionIs(embedding.length)))
    .orderBy(distance)
    .limit(limit);
}

export async function vectorRecall(
  db: Database,
  filter: RecallFilter,
  embedding: number[],
  limit: number,
): Promise<RecalledChunk[]> {
  const rows = await vectorRecallQuery(db, filter, embedding, limit);
  return rows.map(({ distance, ...row }) => ({ ...row, score: 1 - distance }));
}

/**
 * Any query word may match (an OR of the query's lexemes, not websearch's AND): a question
 * rarely repeats every word of the memory that answers it. Ranked by cover density.
 */
function orQuery(query: string): SQL {
  return sql`replace(plainto_tsquery('english', ${query})::text, '&', '|')::tsquery`;
}

export function keywordRecallQuery(db: Database, filter: RecallFilter, query: string, limit: number) {
  const tsquery = orQuery(query);
  // Normalisation 32: rank / (rank + 1), so the score lies in 0..1.
  const rank = sql<number>`ts_rank_cd(${memoryChunks.tsv}, ${tsquery}, 32)`.mapWith(Number);
  return db
    .select({ ...recalledColumns, rank })
    .from(memoryChunks)
    .innerJoin(memories, eq(memories.id, memoryChunks.memoryId))
    .where(and(...recallConditions(filter), sql`${memoryChunks.tsv} @@ ${tsquery}`))
    .orderBy(desc(rank), memoryChunks.id)
    .limit(limit);
}

export async function keywordRecall(
  db: Database,
  filter: RecallFilter,
  query: string,
  limit: number,
): Promise<RecalledChunk[]> {
  const rows = await keywordRecallQuery(db, filter, query, limit);
  return rows.map(({ rank, ...row }) => ({ ...row, score: rank }));
}

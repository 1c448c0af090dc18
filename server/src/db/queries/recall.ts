import { and, desc, eq, gte, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import { executeRows, type Database } from '../client.js';
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
  /** Vector recall: cosine similarity (-1..1). Keyword recall: BM25 relative to the best match (0..1]. */
  score: number;
  /** Keyword recall: the IDF-weighted share of the query's lexemes the chunk holds (0..1). */
  coverage?: number;
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
 * rarely repeats every word of the memory that answers it.
 */
function orQuery(query: string): SQL {
  return sql`replace(plainto_tsquery('english', ${query})::text, '&', '|')::tsquery`;
}

/** Longest list of query lexemes the keyword rank weighs one by one. */
const MAX_RANKED_LEXEMES = 32;
/** BM25's term-frequency saturation and length normalisation (Robertson's usual values). */
const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** What the keyword rank needs to know before it runs. */
export interface KeywordTerms {
  /** The query's distinct lexemes as the full-text index stores them (english stemming, no stopwords). */
  lexemes: string[];
  /** How many chunks the owner has: BM25's collection size. */
  ownerChunks: number;
}

/** One round trip: the query's lexemes and the owner's chunk count (an index-only count). */
export async function keywordTerms(db: Database, filter: RecallFilter, query: string): Promise<KeywordTerms> {
  const [row] = await executeRows<{ lexemes: string[] | string | null; owner_chunks: number | string }>(
    db,
    sql`select tsvector_to_array(to_tsvector('english', ${query}::text)) as lexemes,
      (select count(*) from ${memoryChunks} where ${and(
        eq(memoryChunks.workspaceId, filter.workspaceId),
        eq(memoryChunks.ownerType, filter.ownerType),
        eq(memoryChunks.ownerId, filter.ownerId),
      )}) as owner_chunks`,
  );
  const lexemes = typeof row?.lexemes === 'string' ? parseTextArray(row.lexemes) : (row?.lexemes ?? []);
  return { lexemes: lexemes.slice(0, MAX_RANKED_LEXEMES), ownerChunks: Number(row?.owner_chunks ?? 0) };
}

/** A Postgres text[] literal (`{a,"b c"}`), for drivers that hand arrays over unparsed. */
function parseTextArray(literal: string): string[] {
  const body = literal.replace(/^\{|\}$/g, '');
  if (body === '') return [];
  return [...body.matchAll(/"((?:[^"\\]|\\.)*)"|([^,]+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!));
}

/**
 * BM25 over the owner's chunks: each matched lexeme counts by its rarity (IDF from the matched
 * set's document frequency, which is the owner's, and the owner's chunk count), damped for long
 * chunks. A plain cover-density rank (ts_rank_cd) weighs every word alike, so a name said in half
 * the memories outranks the one rare word that finds the answer. Term frequency is taken as 1
 * (memories are short; a word said twice is not twice the topic).
 */
function bm25Rank(terms: KeywordTerms): { rank: SQL<number>; coverage: SQL<number> } {
  if (terms.lexemes.length === 0) return { rank: sql<number>`0::float8`, coverage: sql<number>`0::float8` };
  // Document frequencies come from window aggregates over the rows the query visits anyway.
  const total = sql`greatest(count(*) over (), ${terms.ownerChunks}::float8)`;
  const weights = terms.lexemes.map((lexeme) => {
    const hit = sql`(${memoryChunks.tsv} @@ quote_literal(${lexeme}::text)::tsquery)`;
    const df = sql`(count(*) filter (where ${hit}) over ())::float8`;
    return { hit, idf: sql`ln(1 + (${total} - ${df} + 0.5) / (${df} + 0.5))` };
  });
  const matched = sql.join(
    weights.map(({ hit, idf }) => sql`case when ${hit} then ${idf} else 0 end`),
    sql` + `,
  );
  const all = sql.join(
    weights.map(({ idf }) => idf),
    sql` + `,
  );
  const length = sql`length(${memoryChunks.tsv})::float8`;
  const k1 = sql.raw(String(BM25_K1));
  const b = sql.raw(String(BM25_B));
  const norm = sql`(1 + ${k1} * (1 - ${b} + ${b} * ${length} / greatest(1, avg(${length}) over ())))`;
  return {
    rank: sql<number>`((${matched}) * (${k1} + 1) / ${norm})`,
    coverage: sql<number>`((${matched}) / greatest(1e-9, ${all}))`,
  };
}

export function keywordRecallQuery(db: Database, filter: RecallFilter, query: string, terms: KeywordTerms, limit: number) {
  const tsquery = orQuery(query);
  const { rank, coverage } = bm25Rank(terms);
  return db
    .select({ ...recalledColumns, rank: rank.mapWith(Number).as('bm25_rank'), coverage: coverage.mapWith(Number) })
    .from(memoryChunks)
    .innerJoin(memories, eq(memories.id, memoryChunks.memoryId))
    .where(and(...recallConditions(filter), sql`${memoryChunks.tsv} @@ ${tsquery}`))
    .orderBy(desc(sql`bm25_rank`), memoryChunks.id)
    .limit(limit);
}

/** Keyword recall ranked by BM25; scores are relative to the best match (0..1]. */
export async function keywordRecall(
  db: Database,
  filter: RecallFilter,
  query: string,
  limit: number,
): Promise<RecalledChunk[]> {
  const terms = await keywordTerms(db, filter, query);
  if (terms.lexemes.length === 0) return [];
  const rows = await keywordRecallQuery(db, filter, query, terms, limit);
  const best = rows[0]?.rank ?? 0;
  return rows.map(({ rank, ...row }) => ({ ...row, score: best > 0 ? rank / best : 0 }));
}

import { and, type AnyColumn, eq, inArray, isNull, or, SQL, sql, type Query } from 'drizzle-orm';
import { alias, PgDialect } from 'drizzle-orm/pg-core';
import { type Reader, executeRows, runtimeOf } from '../client.js';
import { memories, memoryChunks, memoryTime, ownerChunkCounts } from '../schema/index.js';
import { PREFIX_MIN } from '../../text/tokens.js';
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
  /** Inclusive bounds on the time a memory is about (`memoryTime`: effective_at, else created_at). */
  effectiveFrom?: Date;
  effectiveTo?: Date;
  /**
   * Also memories that are history rather than current truth: those whose time-bound wording
   * has expired (`expires_at` passed, whether the hygiene job has archived them yet or not).
   * Replaced memories and those archived by plan retention stay out. Recalled chunks carry
   * `expiresAt`, so ranking can tell history from current truth.
   */
  history?: boolean;
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
  /** The memory an extraction derived this one from (null: not an extracted child). */
  parentMemoryId: string | null;
  createdAt: Date;
  effectiveAt: Date | null;
  /** When its time-bound wording stops being current truth (null: never); see RecallFilter.history. */
  expiresAt: Date | null;
  /** Vector recall: cosine similarity (-1..1). Keyword recall: BM25 relative to the best match (0..1]. */
  score: number;
  /** Keyword recall: the IDF-weighted share of the query's lexemes the chunk holds (0..1). */
  coverage?: number;
}

/** The owner's chunks: the columns the (workspace, owner) index serves. */
function ownerIs(
  filter: RecallFilter,
  chunks: Record<'workspaceId' | 'ownerType' | 'ownerId', AnyColumn> = memoryChunks,
): SQL[] {
  return [
    eq(chunks.workspaceId, filter.workspaceId),
    eq(chunks.ownerType, filter.ownerType),
    eq(chunks.ownerId, filter.ownerId),
  ];
}

/** The owner's chunks as a scan reads them (its own name in plans). */
const scannedChunks = alias(memoryChunks, 'scanned_chunks');

function recallConditions(filter: RecallFilter): SQL[] {
  return [
    // Chunk-side owner columns first: they are what the (workspace, owner) index serves.
    ...ownerIs(filter),
    // Owner conditions stay on the chunk side only: repeating them on the memory side makes the
    // planner multiply their selectivities, expect one row, and join by scanning the workspace's
    // memories per chunk. Alone, they lead to one primary-key lookup per recalled chunk.
    ...memoryFilterConditions(filter),
  ];
}

/**
 * The memory-side part of a search's filter (everything but the owner): live memories only, and
 * the request's scope, namespace, container tag, types, metadata and time window.
 */
export function memoryFilterConditions(filter: RecallFilter): SQL[] {
  const conditions: Array<SQL | undefined> = filter.history
    ? [historyCondition]
    : [
        // Replaced and archived memories never come back; neither do expired ones the hygiene
        // job has not archived yet.
        eq(memories.lifecycleState, 'active'),
        or(isNull(memories.expiresAt), sql`${memories.expiresAt} > now()`),
      ];
  if (filter.scope !== undefined) conditions.push(eq(memories.scope, filter.scope));
  if (filter.namespace !== undefined) conditions.push(eq(memories.namespace, filter.namespace));
  if (filter.containerTag !== undefined)
    conditions.push(eq(memories.containerTag, filter.containerTag));
  if (filter.memoryTypes?.length) conditions.push(inArray(memories.memoryType, filter.memoryTypes));
  const entries = Object.entries(filter.metadata ?? {});
  if (entries.length > 0) {
    const matches = entries.map(
      ([key, value]) => sql`${memories.metadata} @> ${JSON.stringify({ [key]: value })}::jsonb`,
    );
    conditions.push(filter.metadataMode === 'or' ? or(...matches) : and(...matches));
  }
  conditions.push(...memoryTimeWithin(filter.effectiveFrom, filter.effectiveTo));
  return conditions.filter((condition): condition is SQL => condition !== undefined);
}

/**
 * Inclusive bounds on the time a memory is about (`memoryTime`), for searches and lists alike.
 * The bounds go as text cast to timestamptz: bound to an expression rather than a column, a
 * `Date` would reach the driver unserialised.
 */
export function memoryTimeWithin(from: Date | undefined, to: Date | undefined): SQL[] {
  const bounds: SQL[] = [];
  if (from) bounds.push(sql`${memoryTime} >= ${from.toISOString()}::timestamptz`);
  if (to) bounds.push(sql`${memoryTime} <= ${to.toISOString()}::timestamptz`);
  return bounds;
}

/**
 * Live memories, and expired ones: still active, or archived by the hygiene job's expiry rule
 * (not by plan retention). Two conditions on the memory row: the lookup of lifecycle events this
 * replaced cost a heavy owner's search 2.4–3.1 ms of PostgreSQL CPU (bench/results/ab-history-*).
 */
const historyCondition = sql.raw(liveOrHistory('"memories"'));

/** {@link historyCondition} on the memory row `alias`, for hand-written statements too. */
export function liveOrHistory(alias: string): string {
  return `(${alias}."lifecycle_state" = 'active'
  or (${alias}."lifecycle_state" = 'archived' and ${alias}."archive_rule" = 'expiry'))`;
}

/**
 * What context needs to mark a memory row `alias` as history: when its wording expired and the
 * time it is about, as epoch milliseconds (`expiresAtMs`, `memoryTimeMs`).
 */
export function historyTimes(alias: string): string {
  return `(extract(epoch from ${alias}.expires_at) * 1000)::float8 as "expiresAtMs",
    (extract(epoch from coalesce(${alias}.effective_at, ${alias}.created_at)) * 1000)::float8 as "memoryTimeMs"`;
}

/** A row with {@link historyTimes}' columns as numbers (drivers may hand float8 over as text). */
export function withHistoryTimes<
  Row extends { expiresAtMs: number | string | null; memoryTimeMs: number | string },
>(
  row: Row,
): Omit<Row, 'expiresAtMs' | 'memoryTimeMs'> & {
  expiresAtMs: number | null;
  memoryTimeMs: number;
} {
  return {
    ...row,
    expiresAtMs: row.expiresAtMs === null ? null : Number(row.expiresAtMs),
    memoryTimeMs: Number(row.memoryTimeMs),
  };
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
  parentMemoryId: memories.parentMemoryId,
  createdAt: memories.createdAt,
  effectiveAt: memories.effectiveAt,
  expiresAt: memories.expiresAt,
};

/**
 * Owners with at most this many chunks (all of them, in any state) are read by a scan of their
 * own chunks in both recalls; larger owners through the indexes (HNSW for vectors, the keyword
 * GIN). A scan costs in proportion to the owner; the indexes grow with the whole table: HNSW
 * filters out other owners' neighbours, and the GIN reads every owner's postings of each
 * prefix-matched query word before it keeps the owner's. On a million memories the keyword
 * statements of both cost the same near 5,000 chunks (the vector scan stays cheaper, and exact,
 * well beyond); from that size an owner also earns an HNSW index of its own
 * (owner-indexes.ts). Measured by bench/recall-branches.ts
 * (bench/results/scale-2026-12-07-quiet.md).
 */
export const SCANNED_OWNER_CHUNKS = 5_000;

/** How a recall statement learns the owner's size, and up to which size it scans. */
interface OwnerSizeOptions {
  /** Default: {@link ownerChunksQuery} as a subquery. */
  ownerChunks?: SQL;
  /** Default: {@link SCANNED_OWNER_CHUNKS}. */
  scannedOwnerChunks?: number;
}

const scannedUpTo = (chunks = SCANNED_OWNER_CHUNKS): SQL => sql.raw(String(Math.trunc(chunks)));

/** The owner's chunk count as a scalar subquery (see {@link ownerChunksQuery}). */
const ownerChunksOf = (db: Reader, filter: RecallFilter): SQL =>
  sql`(${ownerChunksQuery(db, filter)})`;

/**
 * The memory of each ranked chunk (`ranked.memory_id`), if it passes the filter, as a lateral
 * subquery: `limit 1` keeps it from being flattened into a join, so memories are read by primary
 * key one by one, only as far down the ranking as the statement's limit needs.
 */
function liveMemoryOfRanked(filter: RecallFilter): SQL {
  return sql`(select ${memories.memoryType}, ${memories.importance}, ${memories.confidence},
        ${memories.feedbackScore}, ${memories.pinned}, ${memories.sourceWeight}, ${memories.parentMemoryId}, ${memories.createdAt},
        ${memories.effectiveAt}, ${memories.expiresAt}
      from ${memories}
      where ${and(sql`${memories.id} = ranked.memory_id`, ...memoryFilterConditions(filter))}
      limit 1)`;
}

/**
 * Nearest chunks by cosine, among chunks embedded with the query's dimension only: for an owner
 * of more than {@link SCANNED_OWNER_CHUNKS} chunks as the planner reads it (HNSW where it pays),
 * for a smaller one by {@link exactVectorRecallQuery}. Only the branch the owner's size picks
 * runs (the other's condition is a constant of the execution).
 *
 * `ownerChunks`: where the owner's chunk count comes from (default: {@link ownerChunksQuery} as
 * a subquery); `scannedOwnerChunks`: the size up to which owners are scanned.
 */
export function vectorRecallQuery(
  db: Reader,
  filter: RecallFilter,
  embedding: number[],
  limit: number,
  { ownerChunks = ownerChunksOf(db, filter), scannedOwnerChunks }: OwnerSizeOptions = {},
): SQL {
  const scanned = scannedUpTo(scannedOwnerChunks);
  // Ordered by the output column: one distance per row, and the query vector sent once.
  const indexed = db
    .select({ ...recalledColumns, distance: cosineDistanceTo(embedding).as('distance') })
    .from(memoryChunks)
    .innerJoin(memories, eq(memories.id, memoryChunks.memoryId))
    .where(and(...recallConditions(filter), embeddingDimensionIs(embedding.length)))
    .orderBy(sql`distance`)
    .limit(limit);
  return sql`(select * from (${indexed}) as indexed where ${ownerChunks} > ${scanned})
    union all
    (select * from (${exactVectorRecallQuery(db, filter, embedding, limit)}) as scanned
      where ${ownerChunks} <= ${scanned})`;
}

/**
 * {@link vectorRecallQuery} that can only scan: the distances of the owner's chunks are computed
 * and sorted in a subquery the planner keeps apart (`offset 0`), so no plan can answer it from
 * the HNSW index, and each chunk's memory is read only in distance order, until `limit` pass the
 * filter (not one lookup per chunk of the owner). Equal distances go by chunk id.
 */
export function exactVectorRecallQuery(
  db: Reader,
  filter: RecallFilter,
  embedding: number[],
  limit: number,
): SQL {
  return sql`select ranked.id, ranked.memory_id, ranked.chunk_index, ranked.text, live.*, ranked.distance
    from (select ${scannedChunks.id}, ${scannedChunks.memoryId}, ${scannedChunks.chunkIndex}, ${scannedChunks.text},
        ${cosineDistanceTo(embedding, scannedChunks)} as distance
      from ${memoryChunks} as scanned_chunks
      where ${and(...ownerIs(filter, scannedChunks), embeddingDimensionIs(embedding.length, scannedChunks))}
      order by distance, ${scannedChunks.id} offset 0) as ranked
    cross join lateral ${liveMemoryOfRanked(filter)} as live
    order by ranked.distance, ranked.id
    limit ${limit}`;
}

export async function vectorRecall(
  db: Reader,
  filter: RecallFilter,
  embedding: number[],
  limit: number,
): Promise<RecalledChunk[]> {
  // Raw rows, mapped here: the query builder's own row mapping costs more than the query waits.
  const rows = await recallRows<MemoryColumns & { id: string; distance: number | string }>(
    db,
    vectorRecallQuery(db, filter, embedding, limit),
  );
  return rows.map((row) => recalled(row.id, row, 1 - Number(row.distance)));
}

/**
 * One query lexeme as tsquery text, right-truncated as `stemsMeet` (text/tokens.ts) matches: the
 * lexeme and the longer words it begins (`'allergi':*`), and its own shorter beginnings of at
 * least PREFIX_MIN letters (`'aller' | 'allerg'`). `weight` restricts each to the chunk's own
 * words (`A`) rather than its context (`D`, see memory_chunks.context_text); empty: either.
 */
function truncatedLexeme(weight: '' | 'A') {
  const min = sql.raw(String(PREFIX_MIN));
  return sql`(select string_agg(quote_literal(left(lexeme, n))
      || case when n = length(lexeme) and n >= ${min} then ':*${sql.raw(weight)}' else '${sql.raw(weight ? `:${weight}` : '')}' end, ' | ')
    from generate_series(least(${min}, length(lexeme)), length(lexeme)) as n)`;
}

/**
 * What a query word found only in a chunk's context (the turn it answers) counts for, against
 * its own words' 1: enough to find a reply through its question, not to outrank the question.
 * Chosen among 0.15, 0.25 and 0.5 by leave-one-conversation-out on the bench's default search
 * (bench/results/quality-2026-12-07.md).
 */
const CONTEXT_WEIGHT = sql.raw(String(0.25));

/** Longest list of query lexemes the keyword rank weighs one by one. */
const MAX_RANKED_LEXEMES = 32;
/** BM25's term-frequency saturation and length normalisation (Robertson's usual values). */
const BM25_K1 = sql.raw(String(1.2));
const BM25_B = sql.raw(String(0.75));

/**
 * BM25 over the owner's chunks, in one statement: each matched lexeme counts by its rarity (IDF
 * from the document frequency among the owner's chunks and the owner's chunk count), damped for
 * long chunks. A plain cover-density rank (ts_rank_cd) weighs every word alike, so a name said in
 * half the memories outranks the one rare word that finds the answer. Term frequency is taken as
 * 1 (memories are short; a word said twice is not twice the topic).
 *
 * The collection statistics (chunk count, document frequency, average length) are the owner's,
 * over chunks in any state, and so are the scores: a filter (or the lifecycle) narrows which
 * chunks come back, never what one scores. That lets the statement score the matched chunks from
 * their own rows and look up the memory of each only in rank order, until `limit` pass the
 * filter: for an owner of 10k memories, 50 lookups instead of one per matched chunk (thousands).
 *
 * The query's lexemes (english stemming, no stopwords, the first MAX_RANKED_LEXEMES in
 * `tsvector_to_array` order) come from PostgreSQL in the same statement. The matched chunks are
 * read once (`matched`); which lexemes each holds is tested once per pair (`hits`); document
 * frequencies and IDF follow per lexeme, and each chunk's IDF sum is added in lexeme order, the
 * same floating-point sum as adding a term per lexeme would give.
 *
 * A chunk's own words weigh 1 and its context's (the turn it answers, memory_chunks.context_text)
 * CONTEXT_WEIGHT; document frequency counts the chunks holding a word themselves (those holding it
 * only in context when none does), and length is the chunk's own, so a chunk without context
 * scores as it did before context existed.
 *
 * `ownerChunks`: where the owner's chunk count comes from (default: {@link ownerChunksQuery} as
 * a subquery); the one-trip search reads it once for the IDF and for its own use.
 * `scannedOwnerChunks`: the size up to which owners are scanned.
 */
export function keywordRecallQuery(
  db: Reader,
  filter: RecallFilter,
  query: string,
  limit: number,
  { ownerChunks = ownerChunksOf(db, filter), scannedOwnerChunks }: OwnerSizeOptions = {},
) {
  const scanned = scannedUpTo(scannedOwnerChunks);
  const live = liveMemoryOfRanked(filter);
  const chunk = sql`(select ${memoryChunks.chunkIndex}, ${memoryChunks.text} from ${memoryChunks}
      where ${memoryChunks.id} = ranked.id)`;
  // Any query word may match (an OR, not websearch's AND): a question rarely repeats every word
  // of the memory that answers it.
  const anyQueryWord = sql`(select string_agg(expansion, ' | ') from lexemes)::tsquery`;
  // A chunk's length is its own words', its context left out. A large owner's matches come from
  // the keyword index; a small owner's chunks are read by the owner index and tested one by one
  // (see SCANNED_OWNER_CHUNKS), in a subquery the planner keeps apart so it cannot use the GIN.
  const matched = sql`select ${memoryChunks.id}, ${memoryChunks.memoryId},
        length(ts_filter(${memoryChunks.tsv}, '{a}'))::float8 as length, ${memoryChunks.tsv}
      from ${memoryChunks}
      where ${and(...ownerIs(filter), sql`${memoryChunks.tsv} @@ ${anyQueryWord}`)}
        and ${ownerChunks} > ${scanned}
    union all
    select owner_chunks.id, owner_chunks.memory_id,
        length(ts_filter(owner_chunks.tsv, '{a}'))::float8 as length, owner_chunks.tsv
      from (select ${scannedChunks.id}, ${scannedChunks.memoryId}, ${scannedChunks.tsv} from ${memoryChunks} as scanned_chunks
        where ${and(...ownerIs(filter, scannedChunks))} offset 0) as owner_chunks
      where owner_chunks.tsv @@ ${anyQueryWord} and ${ownerChunks} <= ${scanned}`;
  return sql`with lexemes as (
      select i, ${truncatedLexeme('')} as expansion, ${truncatedLexeme('A')} as own_expansion
      from unnest(tsvector_to_array(to_tsvector('english', ${query}::text))) with ordinality as t(lexeme, i)
    ),
    terms as (
      select i, expansion::tsquery as lexeme, own_expansion::tsquery as own from lexemes
      where i <= ${sql.raw(String(MAX_RANKED_LEXEMES))}
    ),
    matched as materialized (
      ${matched}
    ),
    hits as materialized (
      select matched.id, terms.i, matched.tsv @@ terms.own as own
      from matched join terms on matched.tsv @@ terms.lexeme
    ),
    collection as (
      select greatest(count(*)::float8, ${ownerChunks}::float8) as total,
        greatest(1, avg(matched.length)) as average_length
      from matched
    ),
    weights as (
      select terms.i, ln(1 + (collection.total - df + 0.5) / (df + 0.5)) as idf
      from terms cross join collection
        cross join lateral (
          select coalesce(nullif(count(*) filter (where hits.own), 0), count(*))::float8 as df
          from hits where hits.i = terms.i
        ) as frequency
    ),
    scored as (
      select id, sum(idf) as idf_sum
      from (select hits.id, weights.idf * case when hits.own then 1 else ${CONTEXT_WEIGHT} end as idf
        from hits join weights using (i) order by hits.id, hits.i) as ordered
      group by id
    ),
    ranked as (
      select matched.id, matched.memory_id,
        coalesce(scored.idf_sum, 0) * (${BM25_K1} + 1)
          / (1 + ${BM25_K1} * (1 - ${BM25_B} + ${BM25_B} * matched.length / collection.average_length)) as rank,
        coalesce(scored.idf_sum, 0)
          / greatest(1e-9, (select sum(idf) from (select idf from weights order by i) as ordered)) as coverage
      from matched cross join collection left join scored using (id)
      order by rank desc, matched.id
    )
    select ranked.id as chunk_id, ranked.memory_id, chunk.chunk_index, chunk.text, live.memory_type,
      live.importance, live.confidence, live.feedback_score, live.pinned, live.source_weight,
      live.parent_memory_id, live.created_at, live.effective_at, live.expires_at, ranked.rank, ranked.coverage
    from ranked cross join lateral ${live} as live cross join lateral ${chunk} as chunk
    order by ranked.rank desc, ranked.id
    limit ${limit}`;
}

/**
 * The number of the owner's chunks (all of them, in any state): its row of `owner_chunk_counts`,
 * which the database keeps exact on every insert and delete of chunks (no row: none yet). One
 * lookup, where counting the chunks by the owner index cost in proportion to the owner.
 */
export function ownerChunksQuery(db: Reader, filter: RecallFilter): SQL {
  const counted = db
    .select({ chunks: ownerChunkCounts.chunks })
    .from(ownerChunkCounts)
    .where(
      and(
        eq(ownerChunkCounts.workspaceId, filter.workspaceId),
        eq(ownerChunkCounts.ownerType, filter.ownerType),
        eq(ownerChunkCounts.ownerId, filter.ownerId),
      ),
    );
  return sql`select coalesce((${counted}), 0) as count`;
}

/** What recall reads of a chunk and its memory, as the drivers hand it over raw. */
export interface MemoryColumns extends Record<string, unknown> {
  memory_id: string;
  chunk_index: number;
  text: string;
  memory_type: string;
  importance: number;
  confidence: number | null;
  feedback_score: number;
  pinned: boolean;
  source_weight: number;
  parent_memory_id: string | null;
  created_at: string | Date;
  effective_at: string | Date | null;
  expires_at: string | Date | null;
}

/**
 * Whether `db`'s sessions plan prepared statements for each execution's values
 * (`plan_cache_mode = force_custom_plan`), asked once per database. Left to choose, PostgreSQL
 * may give a prepared statement one generic plan for every owner after five runs: for keyword
 * recall that is a 200 ms plan for a 10k-memory owner, for vector recall an exact scan instead of
 * the HNSW index (other results).
 */
function plansPerExecution(db: Reader): Promise<boolean> {
  const caches = runtimeOf(db)?.planCaches;
  let known = caches?.plansPerExecution;
  if (!known) {
    known = executeRows<{ mode: string }>(
      db,
      sql`select current_setting('plan_cache_mode') as mode`,
    ).then(
      ([row]) => row?.mode === 'force_custom_plan',
      () => false,
    );
    if (caches) caches.plansPerExecution = known;
  }
  return known;
}

const dialect = new PgDialect();

/**
 * Runs a recall statement (built, or its text and values): prepared when the sessions plan it for
 * each owner's values (one round trip, and no parse, instead of two round trips: postgres.js
 * describes an unnamed statement's parameters before running it), unnamed otherwise. Raw rows
 * either way.
 */
export async function recallRows<T extends Record<string, unknown>>(
  db: Reader,
  query: SQL | Query,
): Promise<T[]> {
  const built = query instanceof SQL ? dialect.sqlToQuery(query) : query;
  return runRecall(db, built, (await plansPerExecution(db)) ? 'recall' : undefined);
}

/**
 * Runs a recall statement prepared whatever `db`'s sessions' plan mode: for a caller that chose
 * the pool for its plan mode (the one-trip search of a small owner, on the generic-plan pool).
 */
export function preparedRecallRows<T extends Record<string, unknown>>(
  db: Reader,
  query: Query,
): Promise<T[]> {
  return runRecall(db, query, 'recall');
}

async function runRecall<T extends Record<string, unknown>>(
  db: Reader,
  query: Query,
  name: string | undefined,
): Promise<T[]> {
  // Any name makes drizzle prepare; postgres.js names and caches the statement per connection by
  // its text, which depends on the filter's shape only.
  const prepared = db._.session.prepareQuery(query, undefined, name, false);
  const result: unknown = await prepared.execute();
  return Array.isArray(result) ? (result as T[]) : (result as { rows: T[] }).rows;
}

/** A timestamptz as the drivers hand it over raw (postgres.js: text; PGlite: a Date). */
const toDate = (value: string | Date): Date => (value instanceof Date ? value : new Date(value));

/**
 * A recalled chunk from its raw row, field by field: this runs for every row a search reads, and
 * spreading a partial object into the final one was a measurable share of a search's CPU.
 * `coverage`: keyword recall's only (undefined elsewhere, so every chunk has the same shape).
 */
export function recalled(
  chunkId: string,
  row: MemoryColumns,
  score: number,
  coverage?: number,
): RecalledChunk {
  return {
    chunkId,
    memoryId: row.memory_id,
    chunkIndex: Number(row.chunk_index),
    text: row.text,
    memoryType: row.memory_type,
    importance: Number(row.importance),
    confidence: row.confidence === null ? null : Number(row.confidence),
    feedbackScore: Number(row.feedback_score),
    pinned: row.pinned,
    sourceWeight: Number(row.source_weight),
    parentMemoryId: row.parent_memory_id ?? null,
    createdAt: toDate(row.created_at),
    effectiveAt: row.effective_at === null ? null : toDate(row.effective_at),
    expiresAt: row.expires_at === null ? null : toDate(row.expires_at),
    score,
    coverage,
  };
}

/** Keyword recall ranked by BM25; scores are relative to the best match (0..1]. */
export async function keywordRecall(
  db: Reader,
  filter: RecallFilter,
  query: string,
  limit: number,
): Promise<RecalledChunk[]> {
  const rows = await recallRows<
    MemoryColumns & { chunk_id: string; rank: number | string; coverage: number | string }
  >(db, keywordRecallQuery(db, filter, query, limit));
  const best = Number(rows[0]?.rank ?? 0);
  return rows.map((row) =>
    recalled(row.chunk_id, row, best > 0 ? Number(row.rank) / best : 0, Number(row.coverage)),
  );
}

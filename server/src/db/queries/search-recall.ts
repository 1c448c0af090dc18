import { sql, type Query, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { toVectorLiteral } from '../schema/index.js';
import { type Reader, runtimeOf, statementPoolOf, type StatementPool } from '../client.js';
import type { PlanCaches } from '../plan-caches.js';
import { episodeNeighboursQuery, neighbourOf, type EpisodeNeighbour } from './episodes.js';
import {
  exactVectorRecallQuery,
  keywordRecallQuery,
  ownerChunksQuery,
  preparedRecallRows,
  recallRows,
  recalled,
  SCANNED_OWNER_CHUNKS,
  vectorRecallQuery,
  type MemoryColumns,
  type RecallFilter,
  type RecalledChunk,
} from './recall.js';

/** What one search reads from the database. */
export interface SearchRecallRequest {
  /** Undefined: no vector recall (keyword mode, or the query could not be embedded). */
  embedding?: number[];
  /** Undefined: no keyword recall (vector mode). */
  query?: string;
  /** Candidates per recall. */
  limit: number;
  /**
   * Episode neighbours (see `episodeNeighbours`) of the memories of the first `seedsPerRecall`
   * chunks of each recall; undefined: none. The search picks its seeds after ranking, among
   * these memories only (`SearchRecall.neighbours.seeds` says which were read), and keeps the
   * neighbours of its seeds (the rows of a seed do not depend on the others).
   */
  episodes?: { windowSeconds: number; span: number; seedsPerRecall: number };
}

/**
 * Episode neighbours read for some memories: the memories they were read for (`seeds`), and the
 * neighbours of each (`rows`).
 */
export interface ReadNeighbours {
  seeds: ReadonlySet<string>;
  rows: EpisodeNeighbour[];
}

export interface SearchRecall {
  /** Vector recall, nearest first (as `vectorRecall`). */
  vector: RecalledChunk[];
  /** Keyword recall, best first (as `keywordRecall`). */
  text: RecalledChunk[];
  /** When asked for: the seeds whose neighbours were read, and those neighbours. */
  neighbours: ReadNeighbours | undefined;
}

const enum Part {
  Vector = 0,
  Keyword = 1,
  Neighbour = 2,
  OwnerSize = 3,
}

type Row = MemoryColumns & {
  part: number;
  chunk_id: string;
  score: number | string | null;
  coverage: number | string | null;
  seed_id: string | null;
  step: number | string | null;
  owner_chunks: number | string | null;
};

const MEMORY_COLUMNS = sql.raw(`memory_id, chunk_index, text, memory_type, importance, confidence,
      feedback_score, pinned, source_weight, parent_memory_id, created_at, effective_at, expires_at`);
/** The columns from chunk_id to step of a row that is no chunk (the owner's size). */
const NO_CHUNK = sql.raw(Array.from({ length: 18 }, () => 'null').join(', '));

/**
 * How PostgreSQL plans a search's statement. `custom`: for each execution's values, on the main
 * pool (`plan_cache_mode = force_custom_plan`), right for any owner but planning costs more than
 * running the statement for a small owner. `generic`: once per connection and shape, on the
 * statement pool (`force_generic_plan`), for owners known to be small only (see
 * {@link searchPlanFor}); its statement reads vector recall with an exact scan (the plan a custom
 * plan picks for such an owner) and the owner's chunk count.
 */
export type SearchPlan = 'custom' | 'generic';

/**
 * Vector recall, keyword recall (with the coverage fusion needs) and the episode neighbours of
 * what they found, as one statement: one round trip per search. Each recall is the statement of
 * `vectorRecallQuery` / `keywordRecallQuery` unchanged, as a materialized CTE (planned as it is
 * planned alone: same plan, same rows); the neighbours are `episodeNeighboursQuery` with the
 * recalled memories as seeds. Rows come back tagged by part, each part in its own order; a last
 * row holds the owner's chunk count. The `generic` statement reads vector recall with
 * `exactVectorRecallQuery`.
 */
export function searchRecallQuery(
  db: Reader,
  filter: RecallFilter,
  request: SearchRecallRequest,
  plan: SearchPlan = 'custom',
): SQL | undefined {
  const ctes: SQL[] = [];
  // The first rows of a materialized CTE are the first it produced: its statement's order.
  const seedLimit = sql.raw(String(Math.trunc(request.episodes?.seedsPerRecall ?? 0)));
  const parts: SQL[] = [];
  const hitSets: SQL[] = [];
  // The owner's chunk count, which both recalls read to choose between scanning the owner's
  // chunks and the indexes (and keyword recall for its IDF): read once and returned too, so the
  // next search of the owner can choose its plan (see searchPlanFor).
  ctes.push(sql`owner_size as materialized (${ownerChunksQuery(db, filter)})`);
  const ownerChunks = sql`(select count from owner_size)`;
  if (request.embedding) {
    const vector =
      plan === 'generic'
        ? exactVectorRecallQuery(db, filter, request.embedding, request.limit)
        : vectorRecallQuery(db, filter, request.embedding, request.limit, { ownerChunks });
    ctes.push(sql`vector_hits as materialized (${vector})`);
    parts.push(sql`select ${sql.raw(String(Part.Vector))} as part, id as chunk_id, ${MEMORY_COLUMNS},
      distance as score, null::float8 as coverage, null::uuid as seed_id, null::bigint as step,
      null::float8 as owner_chunks
      from vector_hits`);
    hitSets.push(sql`(select memory_id from vector_hits limit ${seedLimit})`);
  }
  if (request.query !== undefined) {
    const keyword = keywordRecallQuery(db, filter, request.query, request.limit, { ownerChunks });
    ctes.push(sql`keyword_hits as materialized (${keyword})`);
    parts.push(sql`select ${sql.raw(String(Part.Keyword))} as part, chunk_id, ${MEMORY_COLUMNS},
      rank as score, coverage, null::uuid as seed_id, null::bigint as step,
      null::float8 as owner_chunks
      from keyword_hits`);
    hitSets.push(sql`(select memory_id from keyword_hits limit ${seedLimit})`);
  }
  if (parts.length === 0) return undefined;
  if (request.episodes) {
    const seeds = sql`array(${sql.join(hitSets, sql` union `)})`;
    const { windowSeconds, span } = request.episodes;
    ctes.push(sql`neighbours as (${episodeNeighboursQuery(filter, seeds, windowSeconds, span)})`);
    parts.push(sql`select ${sql.raw(String(Part.Neighbour))} as part, chunk_id, ${MEMORY_COLUMNS},
      null::float8 as score, null::float8 as coverage, seed_id, step, null::float8 as owner_chunks
      from neighbours`);
  }
  parts.push(sql`select ${sql.raw(String(Part.OwnerSize))} as part, ${NO_CHUNK},
      count::float8 as owner_chunks from owner_size`);
  return sql`with ${sql.join(ctes, sql`, `)} ${sql.join(parts, sql` union all `)}`;
}

const dialect = new PgDialect();

/** Where each value of a cached statement comes from: the request, or a constant of the text. */
type Slot = { value: keyof Values } | { constant: unknown };

/** The request's values that a statement's shape does not fix. */
interface Values {
  workspaceId: string;
  ownerType: string;
  ownerId: string;
  scope: string;
  namespace: string;
  containerTag: string;
  embedding: string;
  query: string;
  limit: number;
  windowSeconds: number;
  [type: `type${number}`]: string;
}

/** A statement's text and where its values come from, per shape; null: not cacheable. */
interface Shape {
  text: string;
  slots: Slot[];
}
const shapes = new Map<string, Shape | null>();
const MAX_SHAPES = 256;

/**
 * What fixes the statement's text: the parts present, the embedding's dimension, which optional
 * filters are set (not their values), span and seeds. Undefined: a shape whose values the
 * builder transforms (metadata, time window), built each time.
 */
function shapeOf(
  filter: RecallFilter,
  request: SearchRecallRequest,
  plan: SearchPlan,
): string | undefined {
  if (filter.metadata !== undefined || filter.effectiveFrom || filter.effectiveTo) return undefined;
  const e = request.episodes;
  return [
    plan,
    request.embedding?.length ?? '-',
    request.query !== undefined ? 'q' : '-',
    e ? `${e.span}/${e.seedsPerRecall}` : '-',
    filter.scope !== undefined ? 's' : '-',
    filter.namespace !== undefined ? 'n' : '-',
    filter.containerTag !== undefined ? 'c' : '-',
    filter.memoryTypes?.length ?? '-',
    // History searches read archived memories too: another text.
    filter.history ? 'h' : '-',
  ].join(':');
}

function valuesOf(filter: RecallFilter, request: SearchRecallRequest): Values {
  const values: Values = {
    workspaceId: filter.workspaceId,
    ownerType: filter.ownerType,
    ownerId: filter.ownerId,
    scope: filter.scope ?? '',
    namespace: filter.namespace ?? '',
    containerTag: filter.containerTag ?? '',
    embedding: request.embedding ? toVectorLiteral(request.embedding) : '',
    query: request.query ?? '',
    limit: request.limit,
    windowSeconds: request.episodes?.windowSeconds ?? 0,
  };
  filter.memoryTypes?.forEach((type, i) => (values[`type${i}`] = type));
  return values;
}

/**
 * Builds the statement of a shape twice with two sets of stand-in values, and learns which
 * parameter takes which value: a parameter equal to a stand-in takes that value; one equal in
 * both builds is a constant. Anything else (a value the builder transformed, or one written into
 * the text) leaves the shape uncached.
 */
function learnShape(
  db: Reader,
  filter: RecallFilter,
  request: SearchRecallRequest,
  plan: SearchPlan,
): Shape | null {
  const probe = (n: number) => {
    const mark = (name: string) => `\u0001${n}:${name}`;
    const standIn: RecallFilter = {
      workspaceId: mark('workspaceId'),
      ownerType: mark('ownerType'),
      ownerId: mark('ownerId'),
      ...(filter.scope !== undefined ? { scope: mark('scope') } : {}),
      ...(filter.namespace !== undefined ? { namespace: mark('namespace') } : {}),
      ...(filter.containerTag !== undefined ? { containerTag: mark('containerTag') } : {}),
      ...(filter.memoryTypes
        ? { memoryTypes: filter.memoryTypes.map((_, i) => mark(`type${i}`)) }
        : {}),
      ...(filter.history ? { history: true } : {}),
    };
    const embedding = request.embedding?.map((_, i) => (n + 1) / 7 + i / 1e6);
    const values: Values = {
      ...valuesOf(standIn, { ...request, ...(embedding ? { embedding } : {}) }),
      query: mark('query'),
      limit: 1_000_003 + n,
      windowSeconds: 2_000_003 + n,
    };
    const built = searchRecallQuery(
      db,
      standIn,
      {
        ...request,
        ...(embedding ? { embedding } : {}),
        query: request.query === undefined ? undefined : values.query,
        limit: values.limit,
        ...(request.episodes
          ? { episodes: { ...request.episodes, windowSeconds: values.windowSeconds } }
          : {}),
      } as SearchRecallRequest,
      plan,
    );
    if (!built) return undefined;
    const bySentinel = new Map<unknown, keyof Values>();
    for (const [name, value] of Object.entries(values))
      if (value !== '') bySentinel.set(value, name as keyof Values);
    return { query: dialect.sqlToQuery(built), bySentinel };
  };
  const a = probe(0);
  const b = probe(1);
  if (!a || !b || a.query.sql !== b.query.sql || a.query.params.length !== b.query.params.length)
    return null;
  const slots: Slot[] = [];
  for (let i = 0; i < a.query.params.length; i += 1) {
    const [x, y] = [a.query.params[i], b.query.params[i]];
    const name = a.bySentinel.get(x);
    if (name !== undefined && b.bySentinel.get(y) === name) slots.push({ value: name });
    else if (x === y && !(typeof x === 'string' && x.includes('\u0001')))
      slots.push({ constant: x });
    else return null;
  }
  return { text: a.query.sql, slots };
}

/**
 * The statement of {@link searchRecallQuery} as text and values (no typings: the PostgreSQL and
 * PGlite drivers do not read them). Its text depends on the
 * request's shape only, so it is built once per shape and only its values are filled in after:
 * building it with the query builder cost more CPU than the rest of the search's statement work.
 */
export function searchRecallStatement(
  db: Reader,
  filter: RecallFilter,
  request: SearchRecallRequest,
  plan: SearchPlan = 'custom',
): Query | undefined {
  if (request.embedding === undefined && request.query === undefined) return undefined;
  const shape = shapeOf(filter, request, plan);
  let known = shape === undefined ? null : shapes.get(shape);
  if (shape !== undefined && known === undefined) {
    known = learnShape(db, filter, request, plan);
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(shape, known);
  }
  if (!known) {
    const built = searchRecallQuery(db, filter, request, plan);
    return built ? dialect.sqlToQuery(built) : undefined;
  }
  const values = valuesOf(filter, request);
  return {
    sql: known.text,
    params: known.slots.map((slot) => ('value' in slot ? values[slot.value] : slot.constant)),
  };
}

/**
 * Owners with at most this many chunks (all their chunks, in any state) are searched with the
 * generic plan. Up to this size both recalls read the owner by a scan of its own chunks whatever
 * the plan (SCANNED_OWNER_CHUNKS): planning each search for its values would only cost time.
 */
export const SMALL_OWNER_CHUNKS = SCANNED_OWNER_CHUNKS;
const ownerKey = (filter: RecallFilter) =>
  `${filter.workspaceId}\u0000${filter.ownerType}\u0000${filter.ownerId}`;

/**
 * The plan a search of this owner runs with: `generic` on PostgreSQL for an owner whose last
 * search (in this process) counted at most {@link SMALL_OWNER_CHUNKS} chunks, `custom` for any
 * other (large, or not searched yet, or PGlite). Planning a custom plan costs PostgreSQL more
 * than running the statement for a small owner; a generic plan is planned once per connection
 * and shape, but it cannot tell owners apart, so a large owner keeps custom plans (HNSW where it
 * pays). An owner that grew since its last search is searched once more with the exact scan
 * (exact rows where a custom plan would read the indexes; only slower), and that search's count
 * brings it back to custom plans. Every owner keeps custom plans while the generic plan would
 * not read a small owner by its index (see {@link genericPlansFit}).
 */
export function searchPlanFor(db: Reader, filter: RecallFilter): SearchPlan {
  const runtime = runtimeOf(db);
  const pool = runtime?.statementPool;
  if (!runtime || !pool || !genericPlansFit(runtime.planCaches, pool)) return 'custom';
  const chunks = runtime.planCaches.ownerChunks(ownerKey(filter));
  return chunks !== undefined && chunks <= SMALL_OWNER_CHUNKS ? 'generic' : 'custom';
}

/** How long the generic plan's owner estimate is trusted before it is asked again. */
const GENERIC_ESTIMATE_TTL_MS = 10 * 60_000;

/**
 * Whether a generic plan reads one owner's chunks by an index. It plans for an owner of average
 * size (the statistics' chunks ÷ distinct owners): with a handful of owners, one of them large,
 * that average is a large share of the table, and a small owner's generic plan would read its
 * chunks with a scan of the whole table (the vector part never uses HNSW there: its statement is
 * built so). Asked of PostgreSQL in the background (false until it answers), again every
 * GENERIC_ESTIMATE_TTL_MS.
 */
function genericPlansFit(caches: PlanCaches, pool: StatementPool): boolean {
  const estimate = caches.genericEstimate;
  if (!estimate.pending && Date.now() - estimate.at > GENERIC_ESTIMATE_TTL_MS) {
    const known = estimate;
    known.pending = genericOwnerRead(pool)
      .then(
        ({ rows, byIndex }) => (known.fits = byIndex && rows <= SMALL_OWNER_CHUNKS),
        () => (known.fits = false),
      )
      .then(() => {
        known.at = Date.now();
        known.pending = undefined;
      });
  }
  return estimate.fits;
}

/**
 * How a generic plan reads one owner's chunks with their embeddings (the statement pool plans
 * generically): the rows it expects, and whether by an index rather than a scan of the table.
 */
async function genericOwnerRead(pool: StatementPool): Promise<{ rows: number; byIndex: boolean }> {
  const connection = await pool.client.reserve();
  try {
    await connection.unsafe(`prepare mnemo_owner_rows (uuid, text, text) as
      select id, embedding from memory_chunks
      where workspace_id = $1 and owner_type = $2 and owner_id = $3`);
    try {
      const [row] = await connection.unsafe<
        Array<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number; 'Node Type': string } }] }>
      >(
        `explain (format json) execute mnemo_owner_rows ('00000000-0000-0000-0000-000000000000', '', '')`,
      );
      const plan = row?.['QUERY PLAN'][0].Plan;
      return { rows: Number(plan?.['Plan Rows']), byIndex: plan?.['Node Type'] !== 'Seq Scan' };
    } finally {
      await connection.unsafe('deallocate mnemo_owner_rows');
    }
  } finally {
    connection.release();
  }
}

/** Runs {@link searchRecallQuery} and sorts its rows back into the recalls and neighbours. */
export async function searchRecall(
  db: Reader,
  filter: RecallFilter,
  request: SearchRecallRequest,
): Promise<SearchRecall> {
  const pool = statementPoolOf(db);
  const plan = searchPlanFor(db, filter);
  const query = searchRecallStatement(db, filter, request, plan);
  const rows = !query
    ? []
    : plan === 'generic' && pool
      ? await preparedRecallRows<Row>(pool.db, query)
      : await recallRows<Row>(db, query);
  const vector: RecalledChunk[] = [];
  const text: RecalledChunk[] = [];
  const neighbours: EpisodeNeighbour[] = [];
  let best: number | undefined;
  let ownerChunks: number | undefined;
  for (const row of rows) {
    const part = Number(row.part);
    if (part === Part.OwnerSize) {
      ownerChunks = Number(row.owner_chunks);
    } else if (part === Part.Vector) {
      vector.push(recalled(row.chunk_id, row, 1 - Number(row.score)));
    } else if (part === Part.Keyword) {
      // Scores relative to the best match, which comes first (as keywordRecall).
      best ??= Number(row.score ?? 0);
      const score = best > 0 ? Number(row.score) / best : 0;
      text.push(recalled(row.chunk_id, row, score, Number(row.coverage)));
    } else {
      neighbours.push(neighbourOf(row.seed_id!, Number(row.step), row));
    }
  }
  if (pool && ownerChunks !== undefined)
    runtimeOf(db)?.planCaches.noteOwnerChunks(ownerKey(filter), ownerChunks);
  if (!request.episodes) return { vector, text, neighbours: undefined };
  const first = (hits: RecalledChunk[]) =>
    hits.slice(0, request.episodes!.seedsPerRecall).map((hit) => hit.memoryId);
  const seeds = new Set([...first(vector), ...first(text)]);
  return { vector, text, neighbours: { seeds, rows: neighbours } };
}

import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { episodeNeighboursQuery, type EpisodeNeighbour } from './episodes.js';
import {
  keywordRecallQuery,
  recallRows,
  recalled,
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
   * chunks of each recall; undefined: none. The search picks its seeds among the recalled
   * memories only after ranking, so it asks here for the likely ones and keeps the neighbours of
   * its seeds (the rows of a seed do not depend on the others); a seed outside them needs a
   * lookup of its own (`SearchRecall.neighbours.seeds` says which were read).
   */
  episodes?: { windowSeconds: number; span: number; seedsPerRecall: number };
}

export interface SearchRecall {
  /** Vector recall, nearest first (as `vectorRecall`). */
  vector: RecalledChunk[];
  /** Keyword recall, best first (as `keywordRecall`). */
  text: RecalledChunk[];
  /** When asked for: the seeds whose neighbours were read, and those neighbours. */
  neighbours: { seeds: Set<string>; rows: EpisodeNeighbour[] } | undefined;
}

const enum Part {
  Vector = 0,
  Keyword = 1,
  Neighbour = 2,
}

type Row = MemoryColumns & {
  part: number;
  chunk_id: string;
  score: number | string | null;
  coverage: number | string | null;
  seed_id: string | null;
  step: number | string | null;
};

const MEMORY_COLUMNS = sql.raw(`memory_id, chunk_index, text, memory_type, importance, confidence,
      feedback_score, pinned, source_weight, created_at, effective_at`);

/**
 * Vector recall, keyword recall (with the coverage fusion needs) and the episode neighbours of
 * what they found, as one statement: one round trip per search. Each recall is the statement of
 * `vectorRecallQuery` / `keywordRecallQuery` unchanged, as a materialized CTE (planned as it is
 * planned alone: same plan, same rows); the neighbours are `episodeNeighboursQuery` with the
 * recalled memories as seeds. Rows come back tagged by part, each part in its own order.
 */
export function searchRecallQuery(
  db: Database,
  filter: RecallFilter,
  request: SearchRecallRequest,
): SQL | undefined {
  const ctes: SQL[] = [];
  // The first rows of a materialized CTE are the first it produced: its statement's order.
  const seedLimit = sql.raw(String(Math.trunc(request.episodes?.seedsPerRecall ?? 0)));
  const parts: SQL[] = [];
  const hitSets: SQL[] = [];
  if (request.embedding) {
    const vector = vectorRecallQuery(db, filter, request.embedding, request.limit).getSQL();
    ctes.push(sql`vector_hits as materialized (${vector})`);
    parts.push(sql`select ${sql.raw(String(Part.Vector))} as part, id as chunk_id, ${MEMORY_COLUMNS},
      distance as score, null::float8 as coverage, null::uuid as seed_id, null::bigint as step
      from vector_hits`);
    hitSets.push(sql`(select memory_id from vector_hits limit ${seedLimit})`);
  }
  if (request.query !== undefined) {
    const keyword = keywordRecallQuery(db, filter, request.query, request.limit);
    ctes.push(sql`keyword_hits as materialized (${keyword})`);
    parts.push(sql`select ${sql.raw(String(Part.Keyword))} as part, chunk_id, ${MEMORY_COLUMNS},
      rank as score, coverage, null::uuid as seed_id, null::bigint as step
      from keyword_hits`);
    hitSets.push(sql`(select memory_id from keyword_hits limit ${seedLimit})`);
  }
  if (parts.length === 0) return undefined;
  if (request.episodes) {
    const seeds = sql`array(${sql.join(hitSets, sql` union `)})`;
    const { windowSeconds, span } = request.episodes;
    ctes.push(sql`neighbours as (${episodeNeighboursQuery(filter, seeds, windowSeconds, span)})`);
    parts.push(sql`select ${sql.raw(String(Part.Neighbour))} as part, chunk_id, ${MEMORY_COLUMNS},
      null::float8 as score, null::float8 as coverage, seed_id, step
      from neighbours`);
  }
  return sql`with ${sql.join(ctes, sql`, `)} ${sql.join(parts, sql` union all `)}`;
}

/** Runs {@link searchRecallQuery} and sorts its rows back into the recalls and neighbours. */
export async function searchRecall(
  db: Database,
  filter: RecallFilter,
  request: SearchRecallRequest,
): Promise<SearchRecall> {
  const query = searchRecallQuery(db, filter, request);
  const rows = query ? await recallRows<Row>(db, query) : [];
  const vector: RecalledChunk[] = [];
  const text: RecalledChunk[] = [];
  const neighbours: EpisodeNeighbour[] = [];
  let best: number | undefined;
  for (const row of rows) {
    const part = Number(row.part);
    if (part === Part.Vector) {
      vector.push({ ...recalled(row.chunk_id, row), score: 1 - Number(row.score) });
    } else if (part === Part.Keyword) {
      // Scores relative to the best match, which comes first (as keywordRecall).
      best ??= Number(row.score ?? 0);
      text.push({
        ...recalled(row.chunk_id, row),
        coverage: Number(row.coverage),
        score: best > 0 ? Number(row.score) / best : 0,
      });
    } else {
      neighbours.push({
        seedMemoryId: row.seed_id!,
        step: Number(row.step),
        ...recalled(row.chunk_id, row),
      });
    }
  }
  if (!request.episodes) return { vector, text, neighbours: undefined };
  const first = (hits: RecalledChunk[]) =>
    hits.slice(0, request.episodes!.seedsPerRecall).map((hit) => hit.memoryId);
  const seeds = new Set([...first(vector), ...first(text)]);
  return { vector, text, neighbours: { seeds, rows: neighbours } };
}

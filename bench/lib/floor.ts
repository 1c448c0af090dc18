/**
 * The floor: the hybrid recall of `server/src/db/queries/recall.ts` as plain SQL (the same two
 * statements the query builder generates, same session setting), run in parallel, fused by
 * reciprocal rank fusion (k = 60) in JS. No HTTP, no ORM, no ranking beyond RRF: what any
 * implementation of this search must at least pay.
 */
import type { EmbeddingProvider } from '../../server/src/providers/embeddings/index.js';

/** Runs SQL with positional parameters; returns the rows. */
export type Execute = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

const COLUMNS = `"memory_chunks"."id", "memory_chunks"."memory_id", "memory_chunks"."chunk_index", "memory_chunks"."text",
  "memories"."memory_type", "memories"."importance", "memories"."confidence", "memories"."feedback_score",
  "memories"."pinned", "memories"."source_weight", "memories"."created_at", "memories"."effective_at"`;

const OWNER_WHERE = `"memory_chunks"."workspace_id" = $1 and "memory_chunks"."owner_type" = $2 and "memory_chunks"."owner_id" = $3
  and "memories"."lifecycle_state" = 'active' and ("memories"."expires_at" is null or "memories"."expires_at" > now())`;

export function vectorSql(dimension: number): string {
  const t = `vector(${dimension})`;
  return `select ${COLUMNS}, ("memory_chunks"."embedding"::${t} <=> $4::${t}) as distance
  from "memory_chunks" inner join "memories" on "memories"."id" = "memory_chunks"."memory_id"
  where ${OWNER_WHERE} and "memory_chunks"."embedding_dimension" = ${dimension}
  order by ("memory_chunks"."embedding"::${t} <=> $4::${t}) limit $5`;
}

const TSQUERY = `replace(plainto_tsquery('english', $4)::text, '&', '|')::tsquery`;

export const KEYWORD_SQL = `select ${COLUMNS}, ts_rank_cd("memory_chunks"."tsv", ${TSQUERY}, 32) as rank
  from "memory_chunks" inner join "memories" on "memories"."id" = "memory_chunks"."memory_id"
  where ${OWNER_WHERE} and "memory_chunks"."tsv" @@ ${TSQUERY}
  order by ts_rank_cd("memory_chunks"."tsv", ${TSQUERY}, 32) desc, "memory_chunks"."id" limit $5`;

export const SESSION_SETTING = `set hnsw.iterative_scan = 'relaxed_order'`;

export interface FloorQuery {
  workspaceId: string;
  ownerId: string;
  query: string;
  /** Candidates per recall (the balanced profile's 50). */
  limit: number;
  topK: number;
}

/** Embeds the query, runs both recalls in parallel, fuses by RRF; returns the top memory ids. */
export async function floorSearch(
  execute: Execute,
  embeddings: EmbeddingProvider,
  q: FloorQuery,
): Promise<string[]> {
  const [vector] = await embeddings.embed([q.query], 'query');
  if (!vector) throw new Error('no query embedding');
  const literal = `[${vector.join(',')}]`;
  const owner = [q.workspaceId, 'user', q.ownerId];
  const [byVector, byText] = await Promise.all([
    execute(vectorSql(vector.length), [...owner, literal, q.limit]),
    execute(KEYWORD_SQL, [...owner, q.query, q.limit]),
  ]);
  const fused = new Map<string, number>();
  for (const list of [byVector, byText]) {
    list.forEach((row, rank) => {
      const id = String(row.memory_id);
      fused.set(id, (fused.get(id) ?? 0) + 1 / (60 + rank + 1));
    });
  }
  return [...fused.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, q.topK)
    .map(([id]) => id);
}

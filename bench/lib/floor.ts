/**
 * The floor: the hybrid recall of `server/src/db/queries/recall.ts` as plain SQL (the same two
 * statements the query builder generates, same parameters, same session setting; a server test
 * holds them equal), run in parallel, fused by reciprocal rank fusion (k = 60) in JS. No HTTP, no
 * ORM, no ranking beyond RRF: what any implementation of this search must at least pay.
 */
import { SESSION_SETTINGS } from '../../server/src/db/client.js';
import type { EmbeddingProvider } from '../../server/src/providers/embeddings/index.js';

/** Runs SQL with positional parameters; returns the rows. */
export type Execute = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** Whose memories a recall reads. */
export interface FloorOwner {
  workspaceId: string;
  ownerType: string;
  ownerId: string;
}

const COLUMNS = `"memory_chunks"."id", "memory_chunks"."memory_id", "memory_chunks"."chunk_index", "memory_chunks"."text", "memories"."memory_type", "memories"."importance", "memories"."confidence", "memories"."feedback_score", "memories"."pinned", "memories"."source_weight", "memories"."parent_memory_id", "memories"."created_at", "memories"."effective_at", "memories"."expires_at"`;

/**
 * Live memories and history (expired ones, unless plan retention archived them): every search
 * recalls both (`RecallFilter.history` in recall.ts).
 */
const LIVE_OR_HISTORY = `("memories"."lifecycle_state" = 'active'
  or ("memories"."lifecycle_state" = 'archived' and "memories"."archive_rule" = 'expiry'))`;

/** The owner's live memories and history; `$n` is the first of its three parameters. */
const ownerWhere = (n: number) =>
  `"memory_chunks"."workspace_id" = $${n} and "memory_chunks"."owner_type" = $${n + 1} and "memory_chunks"."owner_id" = $${n + 2} and ${LIVE_OR_HISTORY}`;

const ownerParams = (owner: FloorOwner) => [owner.workspaceId, owner.ownerType, owner.ownerId];

/** Nearest chunks by cosine. Parameters: the vector literal, the owner (3), the limit. */
export function vectorSql(dimension: number): string {
  const t = `halfvec(${dimension})`;
  return `select ${COLUMNS}, ("memory_chunks"."embedding"::${t} <=> $1::${t}) as "distance" from "memory_chunks" inner join "memories" on "memories"."id" = "memory_chunks"."memory_id" where (${ownerWhere(2)} and "memory_chunks"."embedding_dimension" = ${dimension}) order by distance limit $5`;
}

/**
 * Every chunk the vector recall of {@link vectorSql} may return, with its text (to embed again
 * for an exact search). Parameters: the owner (3).
 */
export function ownerChunkTextsSql(dimension: number): string {
  return `select "memory_chunks"."id", "memory_chunks"."text" from "memory_chunks" inner join "memories" on "memories"."id" = "memory_chunks"."memory_id" where (${ownerWhere(1)} and "memory_chunks"."embedding_dimension" = ${dimension})`;
}

export function vectorParams(owner: FloorOwner, literal: string, limit: number): unknown[] {
  return [literal, ...ownerParams(owner), limit];
}

/** BM25 keyword recall in one statement. Parameters: see {@link keywordParams}. */
export const KEYWORD_SQL = `with lexemes as (
      select i, (select string_agg(quote_literal(left(lexeme, n))
          || case when n = length(lexeme) and n >= 5 then ':*' else '' end, ' | ')
        from generate_series(least(5, length(lexeme)), length(lexeme)) as n) as expansion,
        (select string_agg(quote_literal(left(lexeme, n))
          || case when n = length(lexeme) and n >= 5 then ':*A' else ':A' end, ' | ')
        from generate_series(least(5, length(lexeme)), length(lexeme)) as n) as own_expansion
      from unnest(tsvector_to_array(to_tsvector('english', $1::text))) with ordinality as t(lexeme, i)
    ),
    terms as (
      select i, expansion::tsquery as lexeme, own_expansion::tsquery as own from lexemes
      where i <= 32
    ),
    matched as materialized (
      select "memory_chunks"."id", "memory_chunks"."memory_id",
        length(ts_filter("memory_chunks"."tsv", '{a}'))::float8 as length, "memory_chunks"."tsv"
      from "memory_chunks"
      where ("memory_chunks"."workspace_id" = $2 and "memory_chunks"."owner_type" = $3 and "memory_chunks"."owner_id" = $4 and "memory_chunks"."tsv" @@ (select string_agg(expansion, ' | ') from lexemes)::tsquery)
    ),
    hits as materialized (
      select matched.id, terms.i, matched.tsv @@ terms.own as own
      from matched join terms on matched.tsv @@ terms.lexeme
    ),
    collection as (
      select greatest(count(*)::float8, ((select count(*) from "memory_chunks" where ("memory_chunks"."workspace_id" = $5 and "memory_chunks"."owner_type" = $6 and "memory_chunks"."owner_id" = $7)))::float8) as total,
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
      from (select hits.id, weights.idf * case when hits.own then 1 else 0.25 end as idf
        from hits join weights using (i) order by hits.id, hits.i) as ordered
      group by id
    ),
    ranked as (
      select matched.id, matched.memory_id,
        coalesce(scored.idf_sum, 0) * (1.2 + 1)
          / (1 + 1.2 * (1 - 0.75 + 0.75 * matched.length / collection.average_length)) as rank,
        coalesce(scored.idf_sum, 0)
          / greatest(1e-9, (select sum(idf) from (select idf from weights order by i) as ordered)) as coverage
      from matched cross join collection left join scored using (id)
      order by rank desc, matched.id
    )
    select ranked.id as chunk_id, ranked.memory_id, chunk.chunk_index, chunk.text, live.memory_type,
      live.importance, live.confidence, live.feedback_score, live.pinned, live.source_weight,
      live.parent_memory_id, live.created_at, live.effective_at, live.expires_at, ranked.rank, ranked.coverage
    from ranked cross join lateral (select "memories"."memory_type", "memories"."importance", "memories"."confidence",
        "memories"."feedback_score", "memories"."pinned", "memories"."source_weight", "memories"."parent_memory_id", "memories"."created_at",
        "memories"."effective_at", "memories"."expires_at"
      from "memories"
      where ("memories"."id" = ranked.memory_id and ${LIVE_OR_HISTORY})
      limit 1) as live cross join lateral (select "memory_chunks"."chunk_index", "memory_chunks"."text" from "memory_chunks"
      where "memory_chunks"."id" = ranked.id) as chunk
    order by ranked.rank desc, ranked.id
    limit $8`;

export function keywordParams(owner: FloorOwner, query: string, limit: number): unknown[] {
  return [
    query,
    owner.workspaceId,
    owner.ownerType,
    owner.ownerId,
    owner.workspaceId,
    owner.ownerType,
    owner.ownerId,
    limit,
  ];
}

/** The server's per-session settings (db/client.ts) as one statement, for the floor's own client. */
export const SESSION_SETTING = Object.entries(SESSION_SETTINGS)
  .map(([name, value]) => `set ${name} = '${value}'`)
  .join('; ');

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
  const owner = { workspaceId: q.workspaceId, ownerType: 'user', ownerId: q.ownerId };
  const [byVector, byText] = await Promise.all([
    execute(vectorSql(vector.length), vectorParams(owner, literal, q.limit)),
    execute(KEYWORD_SQL, keywordParams(owner, q.query, q.limit)),
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

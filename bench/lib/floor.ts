/**
 * The floor: the hybrid recall of `server/src/db/queries/recall.ts` (its two statements, taken
 * from the server's own statement builders, with the server's parameters and session settings),
 * sent as plain SQL through the bench's own client, run in parallel and fused by reciprocal rank
 * fusion (k = 60) in JS. No HTTP, no ORM at search time, no ranking beyond RRF: what any
 * implementation of this search must at least pay.
 */
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import type { Query } from 'drizzle-orm';
import postgres from 'postgres';
import { SESSION_SETTINGS } from '../../server/src/db/client.js';
import {
  keywordRecallQuery,
  liveOrHistory,
  vectorRecallQuery,
  type RecallFilter,
} from '../../server/src/db/queries/recall.js';
import * as schema from '../../server/src/db/schema/index.js';
import { toVectorLiteral } from '../../server/src/db/schema/index.js';
import type { EmbeddingProvider } from '../../server/src/providers/embeddings/index.js';

/** Runs SQL with positional parameters; returns the rows. */
export type Execute = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** Whose memories a recall reads. */
export interface FloorOwner {
  workspaceId: string;
  ownerType: string;
  ownerId: string;
}

// Only builds statements: the client never connects.
const builder = drizzle({ client: postgres('postgres://floor@127.0.0.1:1/none'), schema });
const dialect = new PgDialect();

/** The values a recall statement takes from the search, by name. */
interface Values {
  workspaceId: string;
  ownerType: string;
  ownerId: string;
  literal: string;
  query: string;
  limit: number;
}

/**
 * A statement of the server's builder as its text and where each parameter comes from: built
 * once with stand-in values, each parameter is the stand-in it equals (or a constant of the
 * statement). So the floor sends exactly the server's statement and builds nothing per search.
 */
interface Template {
  sql: string;
  fill(values: Values): unknown[];
}

function template(build: (standIn: Values) => Query): Template {
  const standIn: Values = {
    workspaceId: '00000000-0000-4000-8000-00000000f100',
    ownerType: '\u0001ownerType',
    ownerId: '\u0001ownerId',
    literal: '',
    query: '\u0001query',
    limit: 1_000_003,
  };
  const built = build(standIn);
  const byValue = new Map<unknown, keyof Values>(
    (Object.keys(standIn) as Array<keyof Values>).map((name) => [standIn[name], name]),
  );
  const slots = built.params.map((param) => byValue.get(param) ?? { constant: param });
  return {
    sql: built.sql,
    fill: (values) =>
      slots.map((slot) => (typeof slot === 'string' ? values[slot] : slot.constant)),
  };
}

// Every search recalls history too (server/src/services/retrieval/search.ts `recallFilter`).
const filterOf = (v: Values): RecallFilter => ({
  workspaceId: v.workspaceId,
  ownerType: v.ownerType,
  ownerId: v.ownerId,
  history: true,
});

const vectorTemplates = new Map<number, Template>();
function vectorTemplate(dimension: number): Template {
  let known = vectorTemplates.get(dimension);
  if (!known) {
    // A stand-in embedding whose literal is told apart from every other value.
    const embedding = Array.from({ length: dimension }, (_, i) => (i + 1) / 1e6);
    known = template((v) => {
      v.literal = toVectorLiteral(embedding);
      return dialect.sqlToQuery(vectorRecallQuery(builder, filterOf(v), embedding, v.limit));
    });
    vectorTemplates.set(dimension, known);
  }
  return known;
}

/** The server's vector recall statement (`vectorRecallQuery`) for embeddings of `dimension`. */
export function vectorSql(dimension: number): string {
  return vectorTemplate(dimension).sql;
}

/** Its parameters; `literal` is the query embedding as pgvector text. */
export function vectorParams(owner: FloorOwner, literal: string, limit: number): unknown[] {
  const dimension = literal.split(',').length;
  return vectorTemplate(dimension).fill({ ...owner, literal, query: '', limit });
}

/**
 * Every chunk the vector recall of {@link vectorSql} may return, with its text (to embed again
 * for an exact search). Parameters: the owner (3).
 */
export function ownerChunkTextsSql(dimension: number): string {
  return `select "memory_chunks"."id", "memory_chunks"."text" from "memory_chunks" inner join "memories" on "memories"."id" = "memory_chunks"."memory_id" where ("memory_chunks"."workspace_id" = $1 and "memory_chunks"."owner_type" = $2 and "memory_chunks"."owner_id" = $3 and ${liveOrHistory('"memories"')} and "memory_chunks"."embedding_dimension" = ${dimension})`;
}

const keywordTemplate = template((v) =>
  dialect.sqlToQuery(keywordRecallQuery(builder, filterOf(v), v.query, v.limit)),
);

/** The server's keyword (BM25) recall statement (`keywordRecallQuery`). */
export const KEYWORD_SQL = keywordTemplate.sql;

export function keywordParams(owner: FloorOwner, query: string, limit: number): unknown[] {
  return keywordTemplate.fill({ ...owner, literal: '', query, limit });
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

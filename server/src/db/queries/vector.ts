import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import { type HalfVector, memoryChunks, toVectorLiteral } from '../schema/index.js';

/** pgvector's limit for `halfvec(N)` (and far above any embedding model). */
export const MAX_EMBEDDING_DIMENSION = 16_000;

export function assertEmbeddingDimension(dimension: number): void {
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_EMBEDDING_DIMENSION) {
    throw new DatabaseError(
      `embedding dimension must be an integer in 1..${MAX_EMBEDDING_DIMENSION}`,
    );
  }
}

/** The stored embedding's type at `dimension`, e.g. `halfvec(384)`: what index expressions and comparisons cast to. */
export function embeddingType(dimension: number): string {
  assertEmbeddingDimension(dimension);
  return `halfvec(${dimension})`;
}

/**
 * `embedding_dimension = N` with N inlined as a literal, never a bound parameter: the planner can
 * only pick the partial index `memory_chunks_embedding_<N>_hnsw` when it can prove the index
 * predicate at plan time, which a generic plan of a prepared statement with `= $1` cannot
 * (checked with plan_cache_mode = force_generic_plan: sequential scan).
 */
export function embeddingDimensionIs(
  dimension: number,
  chunks: { embeddingDimension: AnyColumn } = memoryChunks,
): SQL {
  assertEmbeddingDimension(dimension);
  return sql`${chunks.embeddingDimension} = ${sql.raw(String(dimension))}`;
}

/**
 * Cosine distance (0 = same direction, 2 = opposite) between each chunk's embedding and
 * `queryEmbedding`, written to match the partial HNSW index expression `embedding::halfvec(N)` (the query is
 * rounded to half precision too: the index's operator compares two halfvecs).
 * Combine with {@link embeddingDimensionIs} of the same N, and order by it ascending.
 */
export function cosineDistanceTo(
  queryEmbedding: readonly number[],
  chunks: { embedding: AnyColumn } = memoryChunks,
): SQL<number> {
  const typmod = sql.raw(embeddingType(queryEmbedding.length));
  return sql<number>`(${chunks.embedding}::${typmod} <=> ${toVectorLiteral(queryEmbedding)}::${typmod})`.mapWith(
    Number,
  );
}

/** Cosine similarity clamped to -1..1 as pgvector clamps it; NaN for a zero vector. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  if (na === 0 || nb === 0) return Number.NaN;
  return Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)));
}

/**
 * {@link cosineSimilarity} of two vectors as a `halfvec` stores them, from their squared norms
 * summed once: the same sums in the same order, so the same number.
 */
export function cosineOfHalves(a: HalfVector, b: HalfVector): number {
  const x = a.values;
  const y = b.values;
  let dot = 0;
  for (let i = 0; i < x.length; i += 1) dot += x[i]! * y[i]!;
  if (a.squaredNorm === 0 || b.squaredNorm === 0) return Number.NaN;
  return Math.max(-1, Math.min(1, dot / Math.sqrt(a.squaredNorm * b.squaredNorm)));
}

import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import { memoryChunks, toVectorLiteral } from '../schema/index.js';

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

/** The nearest IEEE half-precision value (ties to even), as `halfvec` stores a number. */
export function toHalf(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const magnitude = Math.abs(value);
  if (magnitude >= 65520) return Math.sign(value) * Infinity;
  // Below the smallest normal half the step is fixed: 2^-24.
  let exponent = Math.max(Math.floor(Math.log2(magnitude)), -14);
  if (2 ** exponent > magnitude) exponent -= 1;
  else if (2 ** (exponent + 1) <= magnitude) exponent += 1;
  const step = 2 ** (Math.max(exponent, -14) - 10);
  const scaled = magnitude / step;
  let rounded = Math.round(scaled);
  if (rounded - scaled === 0.5 && rounded % 2 === 1) rounded -= 1;
  return Math.sign(value) * rounded * step;
}

import { customType, timestamp } from 'drizzle-orm/pg-core';
import { halfvecLiteral } from './half-vectors.js';

/** `created_at timestamptz not null default now()`, shared by every table. */
export const createdAt = () =>
  timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

/** Formats an embedding as pgvector's text input (`vector` and `halfvec` alike), e.g. `[0.1,0.2,0.3]`. */
export function toVectorLiteral(values: readonly number[]): string {
  return `[${values.join(',')}]`;
}

/** Parses pgvector's text output `[1,2,3]` back into numbers. */
export function parseVectorLiteral(value: string): number[] {
  const inner = value.trim().replace(/^\[/, '').replace(/\]$/, '');
  return inner === '' ? [] : inner.split(',').map(Number);
}

/**
 * An untyped pgvector half-precision column (`halfvec`, no dimension), so one column can hold
 * embeddings from providers of different dimensions; queries cast it to `halfvec(N)` per
 * dimension. Half precision halves the stored vectors and their HNSW index; nearest-neighbour
 * order does not move (recall of the vector stage against exact search: bench/README.md).
 */
export const halfvec = customType<{ data: number[]; driverData: string }>({
  dataType() {
    return 'halfvec';
  },
  toDriver(value) {
    return halfvecLiteral(value);
  },
  fromDriver(value) {
    return parseVectorLiteral(value);
  },
});

/** A PostgreSQL `tsvector`; only used for generated columns, so it is read as text. */
export const tsvector = customType<{ data: string }>({
  dataType() {
    return 'tsvector';
  },
});

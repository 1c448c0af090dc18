import { customType, timestamp } from 'drizzle-orm/pg-core';

/** `created_at timestamptz not null default now()`, shared by every table. */
export const createdAt = () =>
  timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

/** Formats an embedding as pgvector's text input, e.g. `[0.1,0.2,0.3]`. */
export function toVectorLiteral(values: readonly number[]): string {
  return `[${values.join(',')}]`;
}

/** Parses pgvector's text output `[1,2,3]` back into numbers. */
export function parseVectorLiteral(value: string): number[] {
  const inner = value.trim().replace(/^\[/, '').replace(/\]$/, '');
  return inner === '' ? [] : inner.split(',').map(Number);
}

/**
 * An untyped pgvector column (`vector`, no dimension), so one column can hold embeddings
 * from providers of different dimensions; queries cast it to `vector(N)` per dimension.
 */
export const vector = customType<{ data: number[]; driverData: string }>({
  dataType() {
    return 'vector';
  },
  toDriver(value) {
    return toVectorLiteral(value);
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

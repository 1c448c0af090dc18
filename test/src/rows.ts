/**
 * Row counts of the tables a request could write, to show that a refused request wrote nothing.
 * Every table of the schema is counted (so tables added later are too) except the ones every
 * request touches by design: the audit log records refusals, and metering counts attempts.
 */
import { getTableName, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import type { Database } from '../../server/src/db/client.js';
import * as schema from '../../server/src/db/schema/index.js';

/** Written for refused requests too, on purpose. */
const WRITTEN_BY_EVERY_REQUEST = new Set(['audit_log', 'usage_counters', 'usage_reservations']);

export const COUNTED_TABLES: string[] = [
  ...new Set(
    (Object.values(schema) as unknown[]).flatMap((value) =>
      is(value, PgTable) ? [getTableName(value)] : [],
    ),
  ),
]
  .filter((name) => !WRITTEN_BY_EVERY_REQUEST.has(name))
  .sort();

/** `{table: rows}` for every counted table, in one statement. */
export async function countRows(db: Database): Promise<Record<string, number>> {
  const columns = sql.join(
    COUNTED_TABLES.map(
      (name) => sql`(select count(*) from ${sql.identifier(name)})::int as ${sql.identifier(name)}`,
    ),
    sql`, `,
  );
  const result = await db.execute(sql`select ${columns}`);
  const row = (Array.isArray(result) ? result[0] : (result as { rows: unknown[] }).rows[0]) as
    Record<string, number> | undefined;
  if (!row) throw new Error('row count returned nothing');
  return Object.fromEntries(COUNTED_TABLES.map((name) => [name, Number(row[name])]));
}

/** The tables whose counts differ, as `name: before -> after`. */
export function changedTables(
  before: Record<string, number>,
  after: Record<string, number>,
): string[] {
  return Object.keys({ ...before, ...after })
    .filter((name) => before[name] !== after[name])
    .map((name) => `${name}: ${before[name]} -> ${after[name]}`);
}

import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { keywordRecallQuery, vectorRecallQuery } from '../../src/db/queries/recall.js';
import * as schema from '../../src/db/schema/index.js';

interface Floor {
  vectorSql(dimension: number): string;
  vectorParams(owner: object, literal: string, limit: number): unknown[];
  KEYWORD_SQL: string;
  keywordParams(owner: object, query: string, limit: number): unknown[];
}

// The speed bench's floor is only honest while it runs the statements the server runs: it takes
// them from the server's builders once and fills in each search's values itself, which must give
// what the builder gives for those values. Loaded by URL: bench/ is outside this package's sources.
const floor = (await import(new URL('../../../bench/lib/floor.ts', import.meta.url).href)) as Floor;
// Never connects: only builds SQL.
const db = drizzle({ client: postgres('postgres://floor@127.0.0.1:1/none'), schema });
const dialect = (
  db as unknown as { dialect: { sqlToQuery(sql: unknown): { sql: string; params: unknown[] } } }
).dialect;
const owner = {
  workspaceId: '00000000-0000-4000-8000-000000000001',
  ownerType: 'user',
  ownerId: 'owner-1',
};
// Every search recalls history too (search.ts recallFilter), so the floor runs that statement.
const filter = { ...owner, history: true };
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

describe("the speed bench's floor", () => {
  it('runs the vector recall statement of the server, with the same parameters', () => {
    const embedding = [0.25, -0.5, 0.75];
    const built = dialect.sqlToQuery(vectorRecallQuery(db, filter, embedding, 50));
    expect(flat(floor.vectorSql(3))).toBe(flat(built.sql));
    expect(floor.vectorParams(owner, '[0.25,-0.5,0.75]', 50)).toEqual(built.params);
  });

  it('runs the keyword recall statement of the server, with the same parameters', () => {
    const built = dialect.sqlToQuery(
      keywordRecallQuery(db, filter, 'where does Ana like to hike', 50),
    );
    expect(flat(floor.KEYWORD_SQL)).toBe(flat(built.sql));
    expect(floor.keywordParams(owner, 'where does Ana like to hike', 50)).toEqual(built.params);
  });
});

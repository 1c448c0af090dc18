import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isConnectionLost, isDatabaseUnavailable, unavailableError } from '../../src/db/faults.js';
import { createLogger } from '../../src/logger.js';
import { DatabaseError } from '../../src/errors.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';

const SECRET = 'my-diary-entry-7f3a';

describeDb('database errors are logged without statement values', () => {
  let database: TestDatabase;
  const lines: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    }),
  );

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  const failure = (run: () => Promise<unknown>) =>
    run().then(
      () => expect.unreachable('the statement should fail'),
      (error: unknown) => error,
    );

  it('logs the SQLSTATE but neither the text, the parameters nor the values', async () => {
    // The driver's message quotes the value ("invalid input syntax for type integer: ...").
    const error = await failure(() => database.db.execute(sql`select ${SECRET}::int as n`));
    logger.error({ err: error }, 'query failed');
    // The way queries report an unexpected result: our error with the driver's as its cause.
    logger.error({ err: new DatabaseError('insert returned no row', { cause: error }) }, 'wrapped');
    const [direct, wrapped] = lines
      .slice(-2)
      .map((line) => JSON.parse(line) as { err: Record<string, unknown> });
    for (const line of lines) {
      expect(line).not.toContain(SECRET);
      expect(line).not.toMatch(/"(params|parameters|query)":/);
    }
    expect(direct?.err.code).toBe('22P02');
    expect(wrapped?.err).toMatchObject({
      type: 'DatabaseError',
      message: 'insert returned no row',
      code: '22P02',
    });
  });

  it('keeps what a constraint failure needs to be found: constraint and table', async () => {
    await database.db.execute(sql`create table fault_probe (id int primary key, note text)`);
    await database.db.execute(sql`insert into fault_probe values (1, ${SECRET})`);
    const error = await failure(() =>
      database.db.execute(sql`insert into fault_probe values (1, ${SECRET})`),
    );
    logger.error({ err: error }, 'duplicate');
    const line = lines.at(-1) ?? '';
    // PostgreSQL's detail would say "Key (id)=(1) already exists"; the values stay out.
    expect(line).not.toContain(SECRET);
    expect(JSON.parse(line)).toMatchObject({
      err: { code: '23505', constraint_name: 'fault_probe_pkey', table_name: 'fault_probe' },
    });
    // Not a fault of the database's availability: this stays a 500, not a 503.
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

it('classifies availability faults, and only them, as 503 with Retry-After', () => {
  const wrapped = (code: string) => Object.assign(new Error('Failed query'), { cause: { code } });
  for (const code of [
    '57014',
    '55P03',
    '57P01',
    '53300',
    '08006',
    'CONNECTION_CLOSED',
    'ECONNREFUSED',
  ])
    expect(isDatabaseUnavailable(wrapped(code)), code).toBe(true);
  for (const code of ['23505', '22P02', '42P01', 'ERR_SOMETHING'])
    expect(isDatabaseUnavailable(wrapped(code)), code).toBe(false);
  expect(isDatabaseUnavailable(new Error('no code'))).toBe(false);
  // Only a lost connection is worth sending a read again; a timeout would time out again.
  expect(isConnectionLost(wrapped('57P01'))).toBe(true);
  expect(isConnectionLost(wrapped('57014'))).toBe(false);
  const answer = unavailableError(wrapped('55P03'));
  expect(answer).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
  expect(answer?.headers['Retry-After']).toMatch(/^\d+$/);
});

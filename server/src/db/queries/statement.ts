import { statementPoolOf, type Database, type Reader, type Writer } from '../client.js';
import { DatabaseError } from '../../errors.js';

/** The writer or a transaction of it: both run the same queries, reads and writes. */
export type Queryable = Reader & Pick<Database, 'insert' | 'update' | 'delete'>;

/**
 * A hand-written statement for a hot path, with named parameters (`:name`, cast where the type
 * matters: `:id::uuid`) turned into `$1..$n` once, when the module loads.
 *
 * On PostgreSQL it runs as a named prepared statement, parsed once per pooled connection: a
 * query the builder runs (unnamed) costs two round trips, one to describe its parameters and one
 * to run it, and is parsed every time; a prepared one costs one, and several can share a network
 * write. Given the database (not a transaction) it runs on the statement pool, which plans it
 * once (see `statementPoolOf`): only for statements whose plans do not depend on the values.
 * PGlite runs it as any query. Values go to the driver as they are: pass timestamps as ISO
 * strings and JSON as text (`:x::json`), since drizzle's column mappers are bypassed here.
 */
export class Statement<Params extends Record<string, unknown>> {
  readonly text: string;
  private readonly names: Array<keyof Params & string> = [];

  constructor(text: string) {
    this.text = text.replace(/(?<![:\w]):([a-zA-Z]\w*)/g, (_, name: keyof Params & string) => {
      let index = this.names.indexOf(name);
      if (index < 0) index = this.names.push(name) - 1;
      return `$${index + 1}`;
    });
  }

  /** The positional values, in the order of the text's `$n`. */
  values(params: Params): unknown[] {
    return this.names.map((name) => {
      const value = params[name];
      if (value === undefined) throw new DatabaseError(`statement parameter :${name} is missing`);
      return value;
    });
  }

  /** Runs the statement and returns its rows (timestamps as strings, JSON parsed). */
  run<Row extends Record<string, unknown>>(db: Queryable, params: Params): Promise<Row[]> {
    return this.execute<Row>(db, params);
  }

  /** {@link run} for a statement that only reads, so it can run on a reader. */
  read<Row extends Record<string, unknown>>(db: Reader, params: Params): Promise<Row[]> {
    return this.execute<Row>(db, params);
  }

  private async execute<Row extends Record<string, unknown>>(
    db: Reader,
    params: Params,
  ): Promise<Row[]> {
    // Any name makes drizzle's postgres.js session prepare; postgres.js names and caches the
    // statement itself, per connection, by its text.
    // A transaction is no key of the map: it runs on its own connection.
    const values = this.values(params);
    const target = statementPoolOf(db)?.db ?? db;
    const query = target._.session.prepareQuery(
      { sql: this.text, params: values },
      undefined,
      'hot',
      false,
    );
    const result: unknown = await query.execute();
    return Array.isArray(result) ? (result as Row[]) : (result as { rows: Row[] }).rows;
  }
}

/** A statement per embedding dimension (0: none), built on first use. */
export function statementPerDimension<Params extends Record<string, unknown>>(
  text: (dimension: number) => string,
): (dimension: number) => Statement<Params> {
  const statements = new Map<number, Statement<Params>>();
  return (dimension) => {
    let statement = statements.get(dimension);
    if (!statement) {
      statement = new Statement<Params>(text(dimension));
      statements.set(dimension, statement);
    }
    return statement;
  };
}

/** One statement of {@link inOneTrip}, with its values. */
export interface Step {
  statement: Statement<never>;
  params: Record<string, unknown>;
}

export const step = <Params extends Record<string, unknown>>(
  statement: Statement<Params>,
  params: Params,
): Step => ({ statement: statement as unknown as Statement<never>, params });

/**
 * Runs the statements as one transaction and returns each one's rows. On PostgreSQL `begin`, the
 * statements and `commit` are sent on a reserved connection without waiting for any answer in
 * between (postgres.js flushes its buffer once it passes 1 KB, so a large statement may take a
 * second write): one round trip in all. So the statements must not depend on each other's
 * results in JavaScript, and a later one sees what an earlier one did or waited for (a lock).
 * When one fails, PostgreSQL aborts the transaction, the `commit` rolls it back, and that first
 * error is thrown. On PGlite: a plain transaction.
 */
export async function inOneTrip(
  db: Writer,
  steps: Step[],
): Promise<Array<Record<string, unknown>[]>> {
  const pool = statementPoolOf(db);
  if (!pool) {
    return db.transaction(async (tx) => {
      const results: Array<Record<string, unknown>[]> = [];
      for (const { statement, params } of steps)
        results.push(await statement.run(tx, params as never));
      return results;
    });
  }
  const connection = await pool.client.reserve();
  let timer: NodeJS.Timeout | undefined;
  try {
    const lost = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new DatabaseError('A pipelined transaction got no answer; its connection was lost', {
              cause: { code: 'CONNECTION_DESTROYED' },
            }),
          ),
        pool.tripTimeoutMs,
      );
    });
    const settled = await Promise.race([
      Promise.allSettled([
        connection.unsafe('begin'),
        ...steps.map(({ statement, params }) =>
          connection.unsafe(statement.text, statement.values(params as never) as never[], {
            prepare: true,
          }),
        ),
        connection.unsafe('commit'),
      ]),
      lost,
    ]);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return settled
      .slice(1, -1)
      .map((outcome) => (outcome as PromiseFulfilledResult<Record<string, unknown>[]>).value);
  } finally {
    clearTimeout(timer);
    connection.release();
  }
}

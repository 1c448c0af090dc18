import { sql } from 'drizzle-orm';
import type { Database, Writer } from './client.js';

/**
 * How long a start-up step waits for another instance's: instances started together queue here,
 * however long the first takes; the sessions' usual lock and statement timeouts (a few seconds)
 * are for request paths.
 */
const WAIT = '60s';

/** Advisory lock keys of the start-up steps that instances started together take in turn. */
export const ADVISORY_LOCKS = {
  /** The first workspace and its key (services/bootstrap.ts). */
  bootstrap: 7_236_828_563_461,
  /** pg-boss queues: creating two at once attaches two partitions of one table and deadlocks. */
  jobQueues: 7_236_828_563_462,
} as const;

/**
 * Runs `fn` in a transaction holding a transaction-scoped advisory lock: one instance at a time,
 * and the lock goes with the transaction, so a killed instance cannot leave it held.
 */
export async function inLockedTransaction<T>(
  db: Database,
  key: (typeof ADVISORY_LOCKS)[keyof typeof ADVISORY_LOCKS],
  fn: (tx: Writer) => Promise<T>,
): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql.raw(`set local lock_timeout = '${WAIT}'`));
    await tx.execute(sql.raw(`set local statement_timeout = '${WAIT}'`));
    await tx.execute(sql.raw(`select pg_advisory_xact_lock(${key})`));
    return fn(tx);
  });
}

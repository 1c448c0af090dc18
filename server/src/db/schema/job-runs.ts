import { bigint, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The last run of each scheduled job, whichever instance ran it (GET /v1/admin/jobs). One row per
 * job, overwritten by every run; the runs themselves live in the job runner's own tables
 * (pg-boss's `pgboss` schema) on PostgreSQL.
 */
export const jobRuns = pgTable('job_runs', {
  name: text('name').primaryKey(),
  /** `running`, `succeeded` or `failed`. */
  status: text('status').notNull(),
  lastStartedAt: timestamp('last_started_at', { withTimezone: true }).notNull(),
  lastFinishedAt: timestamp('last_finished_at', { withTimezone: true }),
  lastDurationMs: integer('last_duration_ms'),
  /** The failed run's error class or SQLSTATE: never its message (it may carry values). */
  lastError: text('last_error'),
  /** Which attempt of its period the last run was (1 unless retried). */
  attempt: integer('attempt').notNull().default(1),
  runs: bigint('runs', { mode: 'number' }).notNull().default(0),
  failures: bigint('failures', { mode: 'number' }).notNull().default(0),
});

export type JobRun = typeof jobRuns.$inferSelect;

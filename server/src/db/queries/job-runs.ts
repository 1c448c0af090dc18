import { asc, sql } from 'drizzle-orm';
import type { Reader, Writer } from '../client.js';
import { type JobRun, jobRuns } from '../schema/index.js';

/** Records that a run of `name` started (attempt 1 unless the runner retries it). */
export async function recordJobStarted(
  db: Writer,
  name: string,
  { at, attempt }: { at: Date; attempt: number },
): Promise<void> {
  await db
    .insert(jobRuns)
    .values({ name, status: 'running', lastStartedAt: at, attempt })
    .onConflictDoUpdate({
      target: jobRuns.name,
      set: {
        status: 'running',
        lastStartedAt: at,
        lastFinishedAt: null,
        lastDurationMs: null,
        lastError: null,
        attempt,
      },
    });
}

/** Records how the run started at `startedAt` ended. */
export async function recordJobFinished(
  db: Writer,
  name: string,
  {
    startedAt,
    at,
    error,
  }: {
    startedAt: Date;
    at: Date;
    /** The failure's class or SQLSTATE; undefined: it succeeded. */
    error: string | undefined;
  },
): Promise<void> {
  const failed = error !== undefined;
  await db
    .insert(jobRuns)
    .values({
      name,
      status: failed ? 'failed' : 'succeeded',
      lastStartedAt: startedAt,
      lastFinishedAt: at,
      lastDurationMs: at.getTime() - startedAt.getTime(),
      lastError: error ?? null,
      runs: 1,
      failures: failed ? 1 : 0,
    })
    .onConflictDoUpdate({
      target: jobRuns.name,
      set: {
        status: failed ? 'failed' : 'succeeded',
        lastFinishedAt: at,
        lastDurationMs: at.getTime() - startedAt.getTime(),
        lastError: error ?? null,
        runs: sql`${jobRuns.runs} + 1`,
        failures: failed ? sql`${jobRuns.failures} + 1` : jobRuns.failures,
      },
    });
}

export async function listJobRuns(db: Reader): Promise<JobRun[]> {
  return db.select().from(jobRuns).orderBy(asc(jobRuns.name));
}

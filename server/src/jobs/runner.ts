import PgBoss from 'pg-boss';
import { ADVISORY_LOCKS, inLockedTransaction } from '../db/advisory-lock.js';
import type { Database } from '../db/client.js';
import { recordJobFinished, recordJobStarted } from '../db/queries/job-runs.js';
import type { Logger } from '../logger.js';
import { logJobFailure } from './interval.js';

/** Told between batches whether the runner is stopping (the run then ends after its batch). */
export interface JobSignal {
  stopped(): boolean;
}

/** A job the runner schedules: its name (also its pg-boss queue) and its body. */
export interface ScheduledJobSpec {
  name: string;
  /**
   * Runs once in every period of this length, counted from the Unix epoch, across all instances
   * (0: never). Ignored by `atStart` jobs.
   */
  intervalMs: number;
  /** Runs once when the instances start (re-embedding after an embedder change), not by period. */
  atStart?: boolean;
  /**
   * The pg-boss queue (default: the name). Only instances that share it work its jobs: the
   * re-embedding queue is named after the embedder, so during a rolling deploy an instance still
   * on the old embedder never runs the new one's job.
   */
  queue?: string;
  run(signal: JobSignal): Promise<void>;
}

/** Starts and stops the scheduled jobs; one per process, whichever implementation. */
export interface JobRunner {
  /** `pg-boss` on PostgreSQL (once across instances), `in-process` on embedded PGlite. */
  readonly kind: 'pg-boss' | 'in-process';
  start(): Promise<void>;
  /** Stops scheduling and waits for the runs in progress (they stop after their batch). */
  stop(): Promise<void>;
}

/** Failed runs are tried again this often on PostgreSQL, after a growing delay. */
export const JOB_RETRY_LIMIT = 3;
const JOB_RETRY_DELAY_SECONDS = 30;
/** A run still active after this long (its instance died) is failed and retried elsewhere. */
const JOB_EXPIRE_SECONDS = 30 * 60;
/** How often an idle worker asks for a job. */
const WORKER_POLL_SECONDS = 2;
/** The slot of an `atStart` job: instances started within this window run it once. */
const AT_START_SLOT_SECONDS = 600;
/** How long stop() waits for a run in progress before it lets pg-boss abandon it. */
const STOP_TIMEOUT_MS = 20_000;

/** The start of the next period of `intervalMs` after `now` (periods counted from the epoch). */
export function nextSlot(intervalMs: number, now: number): number {
  return (Math.floor(now / intervalMs) + 1) * intervalMs;
}

/** What a failed run's record keeps: its SQLSTATE or its class, never its message. */
function errorLabel(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'Error';
}

/**
 * Runs `spec` once and records it in `job_runs` (GET /v1/admin/jobs). A failure is recorded and
 * thrown again (the runner decides about retries); a failure of the record itself is logged only.
 */
async function recordedRun(
  db: Database,
  logger: Logger,
  spec: ScheduledJobSpec,
  signal: JobSignal,
  attempt: number,
): Promise<void> {
  const startedAt = new Date();
  const bookkeeping = (work: Promise<void>) =>
    work.catch((err: unknown) => logJobFailure(logger, `${spec.name} run record`, err));
  await bookkeeping(recordJobStarted(db, spec.name, { at: startedAt, attempt }));
  try {
    await spec.run(signal);
  } catch (error) {
    await bookkeeping(
      recordJobFinished(db, spec.name, { startedAt, at: new Date(), error: errorLabel(error) }),
    );
    throw error;
  }
  await bookkeeping(
    recordJobFinished(db, spec.name, { startedAt, at: new Date(), error: undefined }),
  );
}

/**
 * Embedded PGlite: one process owns the database, so plain timers suffice. Each job runs at the
 * start of each of its periods (the same slots as on PostgreSQL), one run at a time; a failed run
 * is logged and the next period tries again.
 */
export function inProcessRunner(
  db: Database,
  logger: Logger,
  specs: ScheduledJobSpec[],
): JobRunner {
  let stopping = false;
  const timers = new Set<NodeJS.Timeout>();
  /** The run in progress of each job. */
  const running = new Map<string, Promise<void>>();
  const signal: JobSignal = { stopped: () => stopping };
  const launch = (spec: ScheduledJobSpec) => {
    // One run at a time: a period that finds the previous run going is skipped.
    if (running.has(spec.name)) return;
    const run = recordedRun(db, logger, spec, signal, 1)
      .catch((err: unknown) => logJobFailure(logger, spec.name, err))
      .finally(() => running.delete(spec.name));
    running.set(spec.name, run);
  };
  const plan = (spec: ScheduledJobSpec) => {
    if (stopping) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        launch(spec);
        plan(spec);
      },
      nextSlot(spec.intervalMs, Date.now()) - Date.now(),
    );
    timer.unref();
    timers.add(timer);
  };
  return {
    kind: 'in-process',
    async start() {
      for (const spec of specs) {
        if (spec.atStart) launch(spec);
        else if (spec.intervalMs > 0) plan(spec);
      }
    },
    async stop() {
      stopping = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all(running.values());
    },
  };
}

export interface PgBossRunnerOptions {
  databaseUrl: string;
  /** Connections of pg-boss's own pool. */
  poolMax: number;
  /** The first retry's delay, doubling after each (default 30 s; tests shorten it). */
  retryDelaySeconds?: number;
}

/**
 * PostgreSQL: pg-boss (its tables in the `pgboss` schema) makes each period's run happen once
 * across every instance. Each instance, at the start of each period, sends the job throttled to
 * that period (`sendThrottled`: one job per name and slot, enforced by a unique index, so the
 * other instances' sends are no-ops); whichever instance's worker fetches it runs it (a job is
 * fetched by one worker: `FOR UPDATE SKIP LOCKED`). A failed run is retried up to
 * {@link JOB_RETRY_LIMIT} times with a growing delay, on any instance; a run whose instance died is
 * expired and retried after {@link JOB_EXPIRE_SECONDS}.
 */
export function pgBossRunner(
  db: Database,
  logger: Logger,
  specs: ScheduledJobSpec[],
  { databaseUrl, poolMax, retryDelaySeconds = JOB_RETRY_DELAY_SECONDS }: PgBossRunnerOptions,
): JobRunner {
  const boss = new PgBoss({
    connectionString: databaseUrl,
    application_name: 'mnemo-jobs',
    max: poolMax,
    // Periods are sent by the instances themselves (sub-minute periods; cron's unit is a minute).
    schedule: false,
    supervise: true,
  });
  boss.on('error', (err) => logJobFailure(logger, 'job runner', err));
  let stopping = false;
  const signal: JobSignal = { stopped: () => stopping };
  const timers = new Set<NodeJS.Timeout>();
  const active = specs.filter((spec) => spec.atStart || spec.intervalMs > 0);

  const send = (spec: ScheduledJobSpec) => {
    const seconds = spec.atStart
      ? AT_START_SLOT_SECONDS
      : Math.max(1, Math.round(spec.intervalMs / 1000));
    boss
      .sendThrottled(spec.queue ?? spec.name, {}, {}, seconds)
      .catch((err: unknown) => logJobFailure(logger, `${spec.name} scheduling`, err));
  };
  const plan = (spec: ScheduledJobSpec) => {
    if (stopping) return;
    const intervalMs = Math.max(1000, Math.round(spec.intervalMs / 1000) * 1000);
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        send(spec);
        plan(spec);
      },
      // A little after the slot begins: every instance's clock agrees on which slot it is.
      nextSlot(intervalMs, Date.now()) - Date.now() + 50,
    );
    timer.unref();
    timers.add(timer);
  };

  return {
    kind: 'pg-boss',
    async start() {
      await boss.start();
      // Each instance creates the queues it works (a queue that exists is left as it is); one
      // instance at a time, or two creations deadlock on pg-boss's partitioned job table.
      await inLockedTransaction(db, ADVISORY_LOCKS.jobQueues, async () => {
        for (const spec of active) {
          const queue = spec.queue ?? spec.name;
          await boss.createQueue(queue, {
            name: queue,
            retryLimit: JOB_RETRY_LIMIT,
            retryDelay: retryDelaySeconds,
            retryBackoff: true,
            expireInSeconds: JOB_EXPIRE_SECONDS,
          });
        }
      });
      for (const spec of active) {
        const queue = spec.queue ?? spec.name;
        await boss.work<object>(
          queue,
          { pollingIntervalSeconds: WORKER_POLL_SECONDS, includeMetadata: true },
          async ([job]) => {
            if (!job) return;
            try {
              await recordedRun(db, logger, spec, signal, job.retryCount + 1);
            } catch (error) {
              logJobFailure(logger, spec.name, error);
              throw error;
            }
          },
        );
        if (spec.atStart) send(spec);
        else plan(spec);
      }
    },
    async stop() {
      stopping = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await boss.stop({ graceful: true, wait: true, timeout: STOP_TIMEOUT_MS });
    },
  };
}

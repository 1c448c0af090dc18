import { createHash } from 'node:crypto';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/client.js';
import { maintainOwnerIndexes } from '../db/queries/owner-indexes.js';
import type { EventOutbox } from '../db/queries/events.js';
import type { Logger } from '../logger.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
import type { BillingService } from '../services/billing.js';
import type { PlanService } from '../services/plans.js';
import type { DashboardSessions } from '../services/dashboard/sessions.js';
import { reconcileUsage } from '../services/usage/index.js';
import { runHygiene, type HygieneCursor } from './hygiene.js';
import { JobPace } from './pacing.js';
import { reembedChunks } from './reembed.js';
import { MAX_SCHEDULED_BATCHES, runRetention, type RetentionDeps } from './retention.js';
import type { ScheduledJobSpec } from './runner.js';

/** The scheduled jobs' names: their pg-boss queues, their `job_runs` rows, GET /v1/admin/jobs. */
export const JOB_NAMES = [
  'memory-hygiene',
  'memory-retention',
  'usage-reconcile',
  'billing-reprocess',
  'dashboard-session-cleanup',
  'reembed',
] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** A job's schedule as configured: a period (0: off), or once at start. */
export interface JobSchedule {
  name: JobName;
  intervalMs: number;
  atStart: boolean;
}

/** Each job's schedule from the configuration (what the admin route reports as next runs). */
export function jobSchedules(
  config: Pick<
    AppConfig,
    'hygiene' | 'retention' | 'usageReconcile' | 'sessionCleanup' | 'billing' | 'limits'
  >,
): JobSchedule[] {
  const every = (name: JobName, intervalMs: number): JobSchedule => ({
    name,
    intervalMs,
    atStart: false,
  });
  return [
    every('memory-hygiene', config.hygiene.intervalMs),
    // Limits off: no plan is in force, retention archives nothing.
    every('memory-retention', config.limits.enabled ? config.retention.intervalMs : 0),
    every('usage-reconcile', config.usageReconcile.intervalMs),
    every(
      'billing-reprocess',
      config.billing.provider === 'none' ? 0 : config.billing.reprocessIntervalMs,
    ),
    every('dashboard-session-cleanup', config.sessionCleanup.intervalMs),
    { name: 'reembed', intervalMs: 0, atStart: true },
  ];
}

export interface JobCatalogueDeps {
  config: AppConfig;
  db: Database;
  /** The events port the operations emit through: the jobs' lifecycle events go the same way. */
  events: EventOutbox;
  logger: Logger;
  plans: PlanService;
  billing: BillingService;
  sessions: DashboardSessions;
  embeddings: EmbeddingProvider;
}

/** The jobs' bodies on their schedules: what the runner runs. */
export function jobCatalogue(deps: JobCatalogueDeps): ScheduledJobSpec[] {
  const { config, db, logger } = deps;
  // Where the last hygiene run on this instance stopped (a run may end at its budget).
  const hygieneCursor: HygieneCursor = {};
  const bodies: Record<JobName, ScheduledJobSpec['run']> = {
    'memory-hygiene': async () => {
      const report = await runHygiene(
        { db, events: deps.events },
        {
          dryRun: false,
          limit: config.hygiene.limit,
          nearThreshold: config.dedupe.nearThreshold,
          cursor: hygieneCursor,
          ...(config.hygiene.budgetMs ? { budgetMs: config.hygiene.budgetMs } : {}),
        },
      );
      if (report.expired.count + report.duplicates.count > 0) {
        logger.info(
          { expired: report.expired.count, duplicates: report.duplicates.count },
          'memory hygiene ran',
        );
      }
      const indexes = await maintainOwnerIndexes(db);
      if (indexes.created.length + indexes.dropped.length > 0)
        logger.info(indexes, 'owner indexes maintained');
    },
    'memory-retention': () =>
      drainRetention(
        { db, plans: deps.plans, logger },
        {
          limit: config.retention.limit,
          limitsEnabled: config.limits.enabled,
          budgetMs: config.retention.budgetMs,
        },
      ),
    'usage-reconcile': async () => {
      // Statements of 500 rows with the event loop given back in between, within the budget.
      const report = await reconcileUsage(db, new Date(), {
        batchSize: 500,
        pace: new JobPace(config.usageReconcile.budgetMs),
      });
      if (report.expired + report.purged > 0) logger.info(report, 'usage reservations reconciled');
    },
    // Each deferred callback carries its own backoff (`next_attempt_at`): a run picks the due ones.
    'billing-reprocess': async () => {
      const report = await deps.billing.reprocess({ limit: 100 });
      if (report.attempted > 0) logger.info(report, 'deferred payment callbacks reprocessed');
    },
    'dashboard-session-cleanup': async () => {
      const deleted = await deps.sessions.cleanup();
      if (deleted > 0) logger.info({ deleted }, 'expired dashboard sessions deleted');
    },
    // Memories embedded by an earlier local embedder join vector search again as it goes.
    reembed: async (signal) => {
      const started = performance.now();
      const changed = await reembedChunks(db, deps.embeddings, { stopped: signal.stopped });
      if (changed > 0) {
        logger.info(
          {
            chunks: changed,
            version: deps.embeddings.version,
            ms: Math.round(performance.now() - started),
          },
          'chunks embedded again with the configured embedder',
        );
      }
    },
  };
  const { provider, dimension, version } = deps.embeddings;
  const embedder = createHash('sha256')
    .update(`${provider}/${dimension}/${version}`)
    .digest('hex')
    .slice(0, 16);
  return jobSchedules(config).map((schedule) => ({
    ...schedule,
    ...(schedule.name === 'reembed' ? { queue: `reembed-${embedder}` } : {}),
    run: bodies[schedule.name],
  }));
}

/**
 * One scheduled retention run: batch after batch until nothing past retention is left, at most
 * {@link MAX_SCHEDULED_BATCHES} batches and `budgetMs` (0: unbounded); the rest waits for the next.
 */
async function drainRetention(
  deps: RetentionDeps,
  { limit, limitsEnabled, budgetMs }: { limit: number; limitsEnabled: boolean; budgetMs: number },
): Promise<void> {
  const deadline = performance.now() + budgetMs;
  for (let batch = 0; batch < MAX_SCHEDULED_BATCHES; batch += 1) {
    const left = budgetMs > 0 ? Math.floor(deadline - performance.now()) : 0;
    if (budgetMs > 0 && left <= 0) break;
    const report = await runRetention(deps, {
      dryRun: false,
      limit,
      limitsEnabled,
      budgetMs: left,
    });
    if (!report.has_more || report.archived === 0) break;
  }
}

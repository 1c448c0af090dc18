import type { Database } from '../db/client.js';
import type { Logger } from '../logger.js';
import { reconcileUsage } from '../services/usage/index.js';
import { everyInterval, type ScheduledJob } from './interval.js';
import { JobPace } from './pacing.js';

/**
 * Refunds metering reservations left open past their expiry (see {@link reconcileUsage}) every
 * `intervalMs` (0: never), within `budgetMs` a run (0: unbounded). Safe with several instances running it at once.
 */
export function scheduleUsageReconcile(
  db: Database,
  logger: Logger,
  { intervalMs, budgetMs = 0 }: { intervalMs: number; budgetMs?: number },
): ScheduledJob {
  return everyInterval('usage reconciliation', intervalMs, logger, async () => {
    // Statements of 500 rows with the event loop given back in between, within the run's budget.
    const report = await reconcileUsage(db, new Date(), {
      batchSize: 500,
      pace: new JobPace(budgetMs),
    });
    if (report.expired + report.purged > 0) logger.info(report, 'usage reservations reconciled');
  });
}

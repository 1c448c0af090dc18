import type { Database } from '../db/client.js';
import type { Logger } from '../logger.js';
import { reconcileUsage } from '../services/usage/index.js';
import { everyInterval, type ScheduledJob } from './interval.js';

/**
 * Refunds metering reservations left open past their expiry (see {@link reconcileUsage}) every
 * `intervalMs` (0: never). Safe with several instances running it at once.
 */
export function scheduleUsageReconcile(
  db: Database,
  logger: Logger,
  { intervalMs }: { intervalMs: number },
): ScheduledJob {
  return everyInterval('usage reconciliation', intervalMs, logger, async () => {
    const report = await reconcileUsage(db);
    if (report.expired + report.purged > 0) logger.info(report, 'usage reservations reconciled');
  });
}

import type { Logger } from '../logger.js';
import type { BillingService } from '../services/billing.js';
import { everyInterval, type ScheduledJob } from './interval.js';

/**
 * Retries deferred payment callbacks every `intervalMs` (0 or billing off: never) inside the
 * server process. Each event carries its own backoff (`next_attempt_at`); a run picks only the
 * due ones.
 */
export function scheduleBillingReprocess(
  billing: BillingService,
  logger: Logger,
  { intervalMs, limit = 100 }: { intervalMs: number; limit?: number },
): ScheduledJob {
  if (!billing.enabled) return everyInterval('payment callback reprocessing', 0, logger, noop);
  return everyInterval('payment callback reprocessing', intervalMs, logger, async () => {
    const report = await billing.reprocess({ limit });
    if (report.attempted > 0) logger.info(report, 'deferred payment callbacks reprocessed');
  });
}

const noop = async () => {};

import type { Logger } from '../logger.js';
import type { BillingService } from '../services/billing.js';

/**
 * Retries deferred payment callbacks every `intervalMs` (0 or billing off: never) inside the
 * server process. Each event carries its own backoff (`next_attempt_at`); a run picks only the
 * due ones. One run at a time; a failed run is logged and the next one tries again.
 */
export function scheduleBillingReprocess(
  billing: BillingService,
  logger: Logger,
  { intervalMs, limit = 100 }: { intervalMs: number; limit?: number },
): { stop(): Promise<void> } {
  if (intervalMs <= 0 || !billing.enabled) return { stop: async () => {} };
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = billing
      .reprocess({ limit })
      .then((report) => {
        if (report.attempted > 0) logger.info(report, 'deferred payment callbacks reprocessed');
      })
      .catch((err: unknown) => logger.error({ err }, 'payment callback reprocessing failed'))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

import type { Database } from '../db/client.js';
import type { Logger } from '../logger.js';
import { runHygiene } from './hygiene.js';

/**
 * Runs the hygiene job every `intervalMs` (0: never) inside the server process. One run at a
 * time; a failed run is logged and the next one tries again.
 */
export function scheduleHygiene(
  db: Database,
  logger: Logger,
  {
    intervalMs,
    limit,
    nearThreshold,
  }: { intervalMs: number; limit: number; nearThreshold: number },
): { stop(): Promise<void> } {
  if (intervalMs <= 0) return { stop: async () => {} };
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = runHygiene(db, { dryRun: false, limit, nearThreshold })
      .then((report) => {
        if (report.expired.count + report.duplicates.count > 0) {
          logger.info(
            { expired: report.expired.count, duplicates: report.duplicates.count },
            'memory hygiene ran',
          );
        }
      })
      .catch((err: unknown) => logger.error({ err }, 'memory hygiene failed'))
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

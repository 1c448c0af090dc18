import type { Database } from '../db/client.js';
import type { Logger } from '../logger.js';
import { runHygiene, type HygieneCursor } from './hygiene.js';
import { everyInterval, type ScheduledJob } from './interval.js';

/** Runs the hygiene job every `intervalMs` (0: never) inside the server process. */
export function scheduleHygiene(
  db: Database,
  logger: Logger,
  {
    intervalMs,
    limit,
    nearThreshold,
    budgetMs,
  }: { intervalMs: number; limit: number; nearThreshold: number; budgetMs?: number },
): ScheduledJob {
  const cursor: HygieneCursor = {};
  return everyInterval('memory hygiene', intervalMs, logger, async () => {
    const report = await runHygiene(db, {
      dryRun: false,
      limit,
      nearThreshold,
      cursor,
      ...(budgetMs ? { budgetMs } : {}),
    });
    if (report.expired.count + report.duplicates.count > 0) {
      logger.info(
        { expired: report.expired.count, duplicates: report.duplicates.count },
        'memory hygiene ran',
      );
    }
  });
}

import type { Database } from '../db/client.js';
import type { Logger } from '../logger.js';
import { runHygiene } from './hygiene.js';
import { everyInterval, type ScheduledJob } from './interval.js';

/** Runs the hygiene job every `intervalMs` (0: never) inside the server process. */
export function scheduleHygiene(
  db: Database,
  logger: Logger,
  {
    intervalMs,
    limit,
    nearThreshold,
  }: { intervalMs: number; limit: number; nearThreshold: number },
): ScheduledJob {
  return everyInterval('memory hygiene', intervalMs, logger, async () => {
    const report = await runHygiene(db, { dryRun: false, limit, nearThreshold });
    if (report.expired.count + report.duplicates.count > 0) {
      logger.info(
        { expired: report.expired.count, duplicates: report.duplicates.count },
        'memory hygiene ran',
      );
    }
  });
}

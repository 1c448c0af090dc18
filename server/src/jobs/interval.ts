import { logBackgroundFailure } from '../db/faults.js';
import type { Logger } from '../logger.js';

export interface ScheduledJob {
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** Logs a background job's failed run as `name failed` (a warning when the database was down). */
export function logJobFailure(logger: Logger, name: string, err: unknown): void {
  logBackgroundFailure(logger, err, {}, `${name} failed`);
}

/**
 * Runs `run` every `intervalMs` (0: never) inside the server process. One run at a time (a tick
 * that finds the previous run still going is skipped); a failed run is logged as `name failed`
 * (a warning when the database was unavailable, which the next tick rides out) and the next tick
 * tries again. The timer does not keep the process alive.
 */
export function everyInterval(
  name: string,
  intervalMs: number,
  logger: Logger,
  run: () => Promise<void>,
): ScheduledJob {
  if (intervalMs <= 0) return { stop: async () => {} };
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = run()
      .catch((err: unknown) => logJobFailure(logger, name, err))
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

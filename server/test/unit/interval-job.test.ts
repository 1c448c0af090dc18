import { describe, expect, it, vi } from 'vitest';
import { everyInterval } from '../../src/jobs/interval.js';
import { recordingLogger } from '../support/recording-logger.js';

describe('everyInterval', () => {
  it('logs a run the database could not serve as a warning, any other failure as an error', async () => {
    vi.useFakeTimers();
    try {
      const { logger, lines } = recordingLogger();
      const failures: unknown[] = [
        Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }),
        new TypeError('a bug'),
      ];
      const job = everyInterval('cleanup', 100, logger, async () => {
        throw failures.shift();
      });
      await vi.advanceTimersByTimeAsync(100);
      await vi.advanceTimersByTimeAsync(100);
      await job.stop();
      expect(lines).toEqual([
        ['warn', 'cleanup failed'],
        ['error', 'cleanup failed'],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});

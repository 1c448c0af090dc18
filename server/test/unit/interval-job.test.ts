import { describe, expect, it, vi } from 'vitest';
import { everyInterval } from '../../src/jobs/interval.js';
import type { Logger } from '../../src/logger.js';
import { BlockMeter, type MeteredItem, type UsageLedger } from '../../src/services/usage-blocks.js';

/** A logger that records the level and message of each line. */
function recordingLogger() {
  const lines: Array<[level: string, message: string]> = [];
  const at = (level: string) => (_fields: unknown, message: string) => lines.push([level, message]);
  const logger = { warn: at('warn'), error: at('error') } as unknown as Logger;
  return { logger, lines };
}

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

describe('BlockMeter settlement', () => {
  it('logs a settlement the database could not take as a warning, any other failure as an error', async () => {
    const { logger, lines } = recordingLogger();
    const failures: unknown[] = [
      Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }),
      new TypeError('a bug'),
    ];
    const ledger: UsageLedger = {
      // A block reserves many requests' worth; the first, exact, reservation one.
      reserve: async (_workspaceId, items) => ({
        id: items[0]!.amount > 1 ? 'block' : 'exact',
        counters: items.map((item) => ({
          resource: item.resource,
          window_kind: item.windowKind,
          window_start: item.windowStart,
          cap: 1_000_000,
          used: 0,
          reserved: 0,
          amount: item.amount,
        })),
      }),
      settle: async (id) => {
        if (id === 'block') throw failures.shift();
      },
    };
    const read: MeteredItem = {
      resource: 'reads',
      windowKind: 'day',
      windowStart: '2026-11-25',
      amount: 1,
      cap: 1_000_000,
      resetsAt: undefined,
    };
    const meter = new BlockMeter(ledger, { requestsPerBlock: 10, maxAgeMs: 60_000 }, logger);
    // The first request is exact (it measures the headroom); the next two each open a block,
    // settled by drain.
    await (await meter.reserve('ws', [read], 'launch')).commit();
    await (await meter.reserve('ws', [read], 'launch')).commit();
    await meter.drain();
    await (await meter.reserve('ws', [read], 'launch')).commit();
    await meter.drain();
    expect(lines).toEqual([
      ['warn', 'usage block settlement failed'],
      ['error', 'usage block settlement failed'],
    ]);
  });
});

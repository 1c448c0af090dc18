import { describe, expect, it } from 'vitest';
import { BlockMeter, type MeteredItem, type UsageLedger } from '../../src/services/usage/blocks.js';
import { recordingLogger } from '../support/recording-logger.js';

describe('BlockMeter', () => {
  it('logs a settlement the database could not take as a warning, any other failure as an error', async () => {
    const { logger, lines } = recordingLogger();
    const failures: unknown[] = [
      Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }),
      new TypeError('a bug'),
    ];
    const ledger = fakeLedger(async (id) => {
      if (id === 'block') throw failures.shift();
    });
    const read = readItem(1_000_000);
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

  it('a block reserved under another cap serves no request (the plan changed)', async () => {
    const ledger = fakeLedger(async () => {});
    const meter = new BlockMeter(ledger, { requestsPerBlock: 10, maxAgeMs: 60_000 });
    // Exact, then a block of ten under a cap of 1,000,000 serving the next request.
    for (let i = 0; i < 3; i++)
      await (await meter.reserve('ws', [readItem(1_000_000)], 'scale')).commit();
    expect(ledger.reserved).toEqual([1, 10]);
    // The plan's cap changed: the open block does not serve it; a reservation under the new cap does.
    await (await meter.reserve('ws', [readItem(500_000)], 'build')).commit();
    expect(ledger.reserved).toHaveLength(3);
    expect(ledger.caps.at(-1)).toBe(500_000);
    await meter.drain();
  });
});

/** A ledger with room for everything that records what it was asked to reserve, and under which cap. */
function fakeLedger(settle: UsageLedger['settle']) {
  const reserved: number[] = [];
  const caps: number[] = [];
  const ledger: UsageLedger & { reserved: number[]; caps: number[] } = {
    reserved,
    caps,
    // A block reserves many requests' worth; an exact reservation one.
    reserve: async (_workspaceId, items) => {
      reserved.push(items[0]!.amount);
      caps.push(items[0]!.cap);
      return {
        id: items[0]!.amount > 1 ? 'block' : 'exact',
        counters: items.map((item) => ({
          resource: item.resource,
          window_kind: item.windowKind,
          window_start: item.windowStart,
          cap: item.cap,
          used: 0,
          reserved: 0,
          amount: item.amount,
        })),
      };
    },
    settle,
  };
  return ledger;
}

const readItem = (cap: number): MeteredItem => ({
  resource: 'reads',
  windowKind: 'day',
  windowStart: '2026-11-25',
  amount: 1,
  cap,
  resetsAt: undefined,
});

import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { BackgroundTasks } from '../../src/services/background.js';

const logger = createLogger('silent');

describe('BackgroundTasks.batch', () => {
  it('writes queued items together after the interval, in the order they came', async () => {
    vi.useFakeTimers();
    try {
      const tasks = new BackgroundTasks(logger);
      const writes: number[][] = [];
      const write = async (items: number[]) => void writes.push(items);
      tasks.batch('signals', 1, write, { flushIntervalMs: 50 });
      tasks.batch('signals', 2, write, { flushIntervalMs: 50 });
      await vi.advanceTimersByTimeAsync(49);
      expect(writes).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      await tasks.drain();
      expect(writes).toEqual([[1, 2]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes a full batch at once, and drain writes what is left', async () => {
    const tasks = new BackgroundTasks(logger);
    const writes: string[][] = [];
    const write = async (items: string[]) => void writes.push(items);
    for (const item of ['a', 'b', 'c'])
      tasks.batch('history', item, write, { maxBatch: 2, flushIntervalMs: 60_000 });
    expect(writes).toEqual([]); // started, not yet run
    await tasks.drain();
    expect(writes).toEqual([['a', 'b'], ['c']]);
  });

  it('logs a failed batch without throwing, and keeps batching afterwards', async () => {
    const warn = vi.fn();
    const tasks = new BackgroundTasks({ ...logger, warn } as unknown as typeof logger);
    let fail = true;
    const written: number[] = [];
    const write = async (items: number[]) => {
      if (fail) throw new Error('storage unavailable');
      written.push(...items);
    };
    tasks.batch('signals', 1, write);
    await tasks.drain();
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ task: 'signals' }),
      expect.any(String),
    );
    fail = false;
    tasks.batch('signals', 2, write);
    await tasks.drain();
    expect(written).toEqual([2]);
  });
});

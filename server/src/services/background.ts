import type { Logger } from '../logger.js';

export interface BatchOptions {
  /** Longest an item waits in memory before its batch is written. */
  flushIntervalMs?: number;
  /** A batch this large is written at once. */
  maxBatch?: number;
}

interface Batch {
  items: unknown[];
  write: (items: unknown[]) => Promise<unknown>;
  maxBatch: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Work that must not delay or fail the response it belongs to (learning signals, search
 * history): started now, failures logged, tracked so shutdown and tests can wait (`drain`).
 * This is the spec's degraded-internals rule: when the storage is unavailable, nothing breaks.
 */
export class BackgroundTasks {
  private readonly pending = new Set<Promise<void>>();
  private readonly batches = new Map<string, Batch>();
  /** Labels whose last run failed: logged once when they start failing, once when they recover. */
  private readonly failing = new Map<string, number>();

  constructor(private readonly logger: Logger) {}

  run(label: string, task: () => Promise<unknown>): void {
    const promise = Promise.resolve()
      .then(task)
      .then(() => {
        const failures = this.failing.get(label);
        if (failures === undefined) return;
        this.failing.delete(label);
        this.logger.info({ task: label, failures }, 'background task recovered');
      })
      .catch((err: unknown) => {
        // Once per outage, not per request: a storage that is down fails every run.
        const failures = this.failing.get(label);
        this.failing.set(label, (failures ?? 0) + 1);
        if (failures !== undefined) return;
        this.logger.warn(
          { err, task: label },
          'background task failed; the request was not affected (logged once until it recovers)',
        );
      })
      .finally(() => this.pending.delete(promise));
    this.pending.add(promise);
  }

  /**
   * Queues `item` to be written with the others of its label in one `write` call: after
   * `flushIntervalMs`, or at once when `maxBatch` are waiting. One multi-row insert per interval
   * instead of one insert (and one commit) per request, so the writes stop competing with the
   * requests for the database. `drain` writes what is queued. A crash loses at most one interval.
   */
  batch<T>(
    label: string,
    item: T,
    write: (items: T[]) => Promise<unknown>,
    { flushIntervalMs = 50, maxBatch = 200 }: BatchOptions = {},
  ): void {
    let batch = this.batches.get(label);
    if (!batch) {
      batch = { items: [], write: write as Batch['write'], maxBatch, timer: undefined };
      this.batches.set(label, batch);
    }
    batch.items.push(item);
    if (batch.items.length >= batch.maxBatch) this.flush(label);
    else batch.timer ??= setTimeout(() => this.flush(label), flushIntervalMs);
  }

  /** Writes every queued batch and waits for all work started so far. */
  async drain(): Promise<void> {
    for (const label of this.batches.keys()) this.flush(label);
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private flush(label: string): void {
    const batch = this.batches.get(label);
    if (!batch) return;
    clearTimeout(batch.timer);
    batch.timer = undefined;
    if (batch.items.length === 0) return;
    const items = batch.items;
    batch.items = [];
    this.run(label, () => batch.write(items));
  }
}

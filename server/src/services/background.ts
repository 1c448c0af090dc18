import type { Logger } from '../logger.js';

/**
 * Work that must not delay or fail the response it belongs to (learning signals, search
 * history): started now, failures logged, tracked so shutdown and tests can wait (`drain`).
 * This is the spec's degraded-internals rule: when the storage is unavailable, nothing breaks.
 */
export class BackgroundTasks {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  run(label: string, task: () => Promise<unknown>): void {
    const promise = Promise.resolve()
      .then(task)
      .then(() => undefined)
      .catch((err: unknown) => {
        this.logger.warn({ err, task: label }, 'background task failed; the request was not affected');
      })
      .finally(() => this.pending.delete(promise));
    this.pending.add(promise);
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

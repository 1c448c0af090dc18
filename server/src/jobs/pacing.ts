import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest stretch a job computes before it lets requests waiting on the event loop run. */
export const JOB_SLICE_MS = 8;

/**
 * How a periodic job shares the process with the requests it serves: it works in small batches,
 * calls {@link JobPace.yield} between steps (which gives the event loop back once a slice of
 * work has run {@link JOB_SLICE_MS}), and stops starting new batches once its run's time budget
 * is spent ({@link JobPace.spent}); what is left waits for the next run.
 */
export class JobPace {
  private readonly started = performance.now();
  private sliceStarted = this.started;

  /** `budgetMs`: the run's wall-clock budget (0 or less: unbounded). */
  constructor(
    private readonly budgetMs: number,
    private readonly sliceMs = JOB_SLICE_MS,
  ) {}

  /** The run's budget is spent: finish the batch in hand and stop. */
  get spent(): boolean {
    return this.budgetMs > 0 && performance.now() - this.started >= this.budgetMs;
  }

  /** Gives the event loop back if this slice of work has run long enough. */
  async yield(): Promise<void> {
    if (performance.now() - this.sliceStarted < this.sliceMs) return;
    await nextTurn();
    this.sliceStarted = performance.now();
  }
}

import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceError } from '../errors.js';

/** Seconds a client is told to wait before repeating a request the deadline answered. */
const DEADLINE_RETRY_AFTER_SECONDS = 2;

/** Thrown by a write that was about to start after its request's deadline answered: nothing was written. */
export function deadlinePassedError(): ServiceError {
  return new ServiceError(
    'SERVICE_UNAVAILABLE',
    'The request deadline passed before this was written; nothing was written',
    undefined,
    { 'Retry-After': String(DEADLINE_RETRY_AFTER_SECONDS) },
  );
}

/**
 * What a request's deadline knows of the writes it answers for. A write commits through
 * {@link fencedCommit}: once the deadline has passed no commit starts, and the deadline does not
 * answer "not written" (503) while a commit is running or after one has finished; it waits for the
 * handler's own answer instead (see `http/deadline.ts`). So a plain 503 from the deadline means
 * nothing was written.
 */
export class DeadlineFence {
  private passed = false;
  private running = 0;
  private finished = 0;
  private readonly idle: Array<() => void> = [];

  /** The deadline passed: no commit starts from now on. */
  get expired(): boolean {
    return this.passed;
  }

  /** Commits that ran (or are running) for this request. */
  get commits(): number {
    return this.finished + this.running;
  }

  /** Marks the deadline passed; resolves once no commit is running (at once when none is). */
  expire(): Promise<void> {
    this.passed = true;
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Runs `commit` (a transaction) unless the deadline passed; throws {@link deadlinePassedError} then. */
  async commit<T>(commit: () => Promise<T>): Promise<T> {
    if (this.passed) throw deadlinePassedError();
    this.running += 1;
    try {
      return await commit();
    } finally {
      this.running -= 1;
      this.finished += 1;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}

const current = new AsyncLocalStorage<DeadlineFence>();

/** Runs `work` (the rest of a request) under `fence`: writes it makes are fenced by its deadline. */
export function runFenced<T>(fence: DeadlineFence, work: () => T): T {
  return current.run(fence, work);
}

/** A write's transaction, fenced by the current request's deadline (unfenced outside a request). */
export function fencedCommit<T>(commit: () => Promise<T>): Promise<T> {
  const fence = current.getStore();
  return fence ? fence.commit(commit) : commit();
}

/** Whether the current request's deadline has passed: work that would write should stop. */
export function deadlineExpired(): boolean {
  return current.getStore()?.expired ?? false;
}

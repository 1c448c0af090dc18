import { APIUserAbortError } from '../core/errors.js';

/** The caller signals that are set. */
export function present(signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal[] {
  return signals.filter((signal): signal is AbortSignal => signal !== undefined);
}

/**
 * One signal that aborts when any of `signals` does (`AbortSignal.any` needs Node 20.3; the
 * client runs on Node 18). `dispose` removes the listeners.
 */
export function anySignal(signals: ReadonlyArray<AbortSignal | undefined>): {
  signal: AbortSignal;
  dispose: () => void;
} {
  const controller = new AbortController();
  const given = present(signals);
  const follow = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const signal of given) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener('abort', follow, { once: true });
  }
  return {
    signal: controller.signal,
    dispose: () => given.forEach((signal) => signal.removeEventListener('abort', follow)),
  };
}

/** Throws `APIUserAbortError` when a caller signal has already fired. */
export function throwIfAborted(signals: ReadonlyArray<AbortSignal | undefined>): void {
  const aborted = present(signals).find((signal) => signal.aborted);
  if (aborted) throw new APIUserAbortError({ cause: aborted.reason });
}

/** Waits `ms`, or rejects with `APIUserAbortError` as soon as a caller signal fires. */
export function sleep(ms: number, signals: ReadonlyArray<AbortSignal | undefined>): Promise<void> {
  throwIfAborted(signals);
  if (ms <= 0) return Promise.resolve();
  const { signal, dispose } = anySignal(signals);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      dispose();
      resolve();
    }, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        dispose();
        reject(new APIUserAbortError({ cause: signal.reason }));
      },
      { once: true },
    );
  });
}

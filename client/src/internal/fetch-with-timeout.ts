import { APIConnectionError, APITimeoutError, APIUserAbortError } from '../core/errors.js';

/** The part of `fetch` the client uses; `globalThis.fetch` satisfies it. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

export interface AttemptOptions {
  fetch: Fetch;
  timeoutMs: number;
  /** Caller signals (client-wide and per-request); any of them aborting cancels the attempt. */
  signals: ReadonlyArray<AbortSignal | undefined>;
}

/** A finished attempt: the response and its whole body as text. */
export interface AttemptResult {
  response: Response;
  text: string;
}

/**
 * One attempt of one request, under its own AbortController. The body is read inside the attempt
 * so that `timeoutMs` bounds the whole exchange, not just the arrival of the headers; the REST
 * transport's retry loop calls this once per attempt, so every attempt gets a fresh timeout.
 *
 * Throws `APITimeoutError` when `timeoutMs` elapses, `APIUserAbortError` when a caller signal
 * aborts, and `APIConnectionError` when `fetch` itself fails.
 */
export async function fetchWithTimeout(
  url: string,
  init: RequestInit,
  { fetch, timeoutMs, signals }: AttemptOptions,
): Promise<AttemptResult> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);

  const callerSignals = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  const followCaller = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const signal of callerSignals) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener('abort', followCaller, { once: true });
  }

  try {
    if (controller.signal.aborted) throw controller.signal.reason;
    const response = await fetch(url, { ...init, signal: controller.signal });
    const text = await response.text();
    return { response, text };
  } catch (error) {
    if (timedOut) throw new APITimeoutError({ timeoutMs });
    const aborted = callerSignals.find((signal) => signal.aborted);
    if (aborted) throw new APIUserAbortError({ cause: aborted.reason });
    throw new APIConnectionError({
      message: `Connection error: could not reach ${url} (${describe(error)})`,
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    for (const signal of callerSignals) signal.removeEventListener('abort', followCaller);
  }
}

/** The most specific reason in a `fetch failed` chain: undici puts `ECONNREFUSED` in the cause. */
function describe(error: unknown): string {
  let reason = error;
  while (reason instanceof Error && reason.cause !== undefined) reason = reason.cause;
  if (
    typeof reason === 'object' &&
    reason !== null &&
    'code' in reason &&
    typeof reason.code === 'string'
  ) {
    return reason.code;
  }
  return reason instanceof Error ? reason.message : String(reason);
}

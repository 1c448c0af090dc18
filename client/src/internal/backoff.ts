/** Longest `Retry-After` the client waits for; a longer one (a daily cap, say) is not retried. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Full jitter, as the spec says: a uniformly random delay in `[0, retryBaseMs * 2^retry)`.
 * `retry` counts from 0 (the wait before the first retry). `random` is `Math.random` unless a
 * test injects a seeded one.
 */
export function backoffDelay(retry: number, retryBaseMs: number, random: () => number): number {
  return Math.floor(random() * retryBaseMs * 2 ** retry);
}

/**
 * Milliseconds to wait according to a `Retry-After` header: delta-seconds (`"2"`, `"0.5"`) or an
 * HTTP date. `undefined` when absent or unreadable; never negative.
 */
export function parseRetryAfter(
  value: string | null,
  now: number = Date.now(),
): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** A deterministic `random()` (mulberry32) for tests and reproducible runs. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

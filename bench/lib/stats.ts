/** Latency measurement helpers shared by the speed benchmarks. */

export interface Measured {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  /** Operations per second over the whole run (wall clock). */
  rate: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export function summarise(latencies: number[], seconds: number): Measured {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    rate: sorted.length / seconds,
  };
}

/**
 * Runs `op(i)` for i in 0..count-1 with `concurrency` workers, timing each call.
 * `op` must throw on failure: a benchmark that silently measures errors is worse than none.
 */
export async function runLoad(
  count: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
): Promise<Measured> {
  const { latencies, seconds } = await timeLoad(0, count, concurrency, op);
  return summarise(latencies, seconds);
}

/** Runs `op(from)` … `op(to - 1)` with `concurrency` workers; each call's latency in ms. */
export async function timeLoad(
  from: number,
  to: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
  const count = to;
  const latencies: number[] = [];
  let next = from;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next;
      if (i >= count) return;
      next += 1;
      const t0 = performance.now();
      await op(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

export const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
export const ratio = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
export const rate = (value: number): string => (Number.isFinite(value) ? value.toFixed(0) : 'n/a');

/** A markdown table from a header and rows of cells. */
export function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

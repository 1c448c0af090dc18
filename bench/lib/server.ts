/**
 * The server as its own process, started the way `pnpm start` does (tsx with the source
 * condition), so RSS and cold start are the real process's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  base: string;
  pid: number;
  /** Spawn until /healthz answered 200, in ms. */
  coldStartMs: number;
  /** Resident set size now and at its peak (VmHWM), in MiB. */
  rss(): Promise<{ rssMiB: number; peakMiB: number }>;
  /**
   * Statements the server has sent to PostgreSQL so far (see lib/count-statements.mjs), and of
   * them those that wrote its deferred batches (audit rows, learning signals, saved searches);
   * NaN when it does not count them (no DATABASE_URL: PGlite).
   */
  statements(): Promise<StatementCount>;
  stop(): Promise<void>;
}

/** Statements sent so far: all, and those that wrote deferred batches (off the response path). */
export interface StatementCount {
  all: number;
  deferred: number;
}

const COUNTER = fileURLToPath(new URL('./count-statements.mjs', import.meta.url));

/** Asks the server's counter (SIGUSR2) for its count and waits for the file to answer. */
async function readCount(
  pid: number,
  file: string,
  last: { sequence: number },
): Promise<StatementCount> {
  process.kill(pid, 'SIGUSR2');
  for (let tries = 0; tries < 500; tries += 1) {
    const text = await readFile(file, 'utf8').catch(() => '');
    const [sequence, all, deferred] = text.split(' ').map(Number);
    if (
      sequence !== undefined &&
      sequence > last.sequence &&
      all !== undefined &&
      deferred !== undefined
    ) {
      last.sequence = sequence;
      return { all, deferred };
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error('the server did not report its statement count');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function readRss(pid: number): Promise<{ rssMiB: number; peakMiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/** `root`: the checkout whose server to run (another tree, to compare versions); default this one. */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 120_000,
  root = REPO_ROOT,
): Promise<ServerProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const counted = env.DATABASE_URL !== undefined;
  // A name of its own: a file left by another run (or another bench on the same port) would be
  // read as this server's count.
  const countFile = join(
    tmpdir(),
    `mnemo-bench-statements-${port}-${randomBytes(6).toString('hex')}`,
  );
  const started = performance.now();
  // One node process (no tsx CLI wrapper), so its pid is the server's.
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // BENCH_CPU_PROF=<dir>: write a V8 CPU profile of the server (on SIGTERM) to that folder.
      ...(process.env.BENCH_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
        : []),
      // BENCH_NODE_ARGS: more flags for the server's node (`--perf-basic-prof` for `perf record`).
      ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ...(counted ? ['--import', COUNTER] : []),
      '--import',
      'tsx',
      '--conditions=mnemo-source',
      'server/src/main.ts',
    ],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        MNEMO_HYGIENE_INTERVAL_MS: '0',
        // Plan caps, metering and rate limits off unless the caller asks for them: the speed
        // benchmark measures the engine (and its bulk loads would pass the daily caps and the
        // per-key rate). limits.ts turns them on to measure what they cost.
        MNEMO_LIMITS: process.env.MNEMO_LIMITS ?? 'off',
        ...(counted
          ? {
              BENCH_STATEMENT_FILE: countFile,
              BENCH_STATEMENT_PORT: new URL(env.DATABASE_URL!).port || '5432',
            }
          : {}),
        ...env,
      },
      // BENCH_SERVER_LOG=<file>: keep the server's pino lines (debugging a failed request).
      stdio: [
        'ignore',
        process.env.BENCH_SERVER_LOG ? openSync(process.env.BENCH_SERVER_LOG, 'a') : 'ignore',
        'pipe',
      ],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => {
    stderr = (stderr + data.toString()).slice(-4000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => ((exited = true), resolve())),
  );
  for (;;) {
    if (exited) throw new Error(`server exited during start:\n${stderr}`);
    if (performance.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer /healthz within ${timeoutMs} ms:\n${stderr}`);
    }
    const ok = await fetch(`${base}/healthz`)
      .then(async (res) => (await res.arrayBuffer(), res.status === 200))
      .catch(() => false);
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const coldStartMs = performance.now() - started;
  const pid = child.pid ?? -1;
  const last = { sequence: 0 };
  return {
    base,
    pid,
    coldStartMs,
    rss: () => readRss(pid),
    statements: () =>
      counted ? readCount(pid, countFile, last) : Promise.resolve({ all: NaN, deferred: NaN }),
    stop: async () => {
      await rm(countFile, { force: true });
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** POSTs JSON to a started server with an API key; any status but 200 throws. The body, as text. */
export async function postJson(
  base: string,
  path: string,
  apiKey: string,
  body: unknown,
): Promise<string> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return text;
}

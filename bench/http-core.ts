/**
 * Server-core overhead: the full Mnemo request pipeline (request id, Origin, body limit, 405
 * guard, auth, handler, audit row, completion log) against a bare Express app answering the same
 * routes in the same run, both on loopback. Prints p50, p95, throughput and ratios.
 *
 *   pnpm bench            (BENCH_REQUESTS, BENCH_CONCURRENCY to change the load)
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { createApp } from '../server/src/app.js';
import { loadConfig } from '../server/src/config.js';
import { openDatabase } from '../server/src/db/client.js';
import { createWorkspace } from '../server/src/db/queries/workspaces.js';
import { createDeps } from '../server/src/deps.js';
import { createLogger } from '../server/src/logger.js';
import { health } from '../server/src/services/health.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const WARMUP = 200;

interface Result {
  name: string;
  requests: number;
  p50: number;
  p95: number;
  rps: number;
}

function listen(app: express.Express): Promise<{ server: Server; base: string }> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, base: `http://127.0.0.1:${port}` });
    });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function load(
  name: string,
  url: string,
  headers: Record<string, string>,
  count: number,
  body?: unknown,
): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      next += 1;
      const t0 = performance.now();
      const res = await fetch(
        url,
        body === undefined
          ? { headers }
          : {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            },
      );
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status}`);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: count,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    rps: count / seconds,
  };
}

async function main(): Promise<void> {
  // Limits off (MNEMO_LIMITS=on to include them): 3000 requests would pass the per-key rate, and
  // this measures the pipeline as before limits existed; limits.ts measures what they cost.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MNEMO_LIMITS: process.env.MNEMO_LIMITS ?? 'off',
  });
  // BENCH_DATABASE_URL: run against PostgreSQL (an existing, disposable database) instead.
  const database = await openDatabase(
    process.env.BENCH_DATABASE_URL ? { databaseUrl: process.env.BENCH_DATABASE_URL } : {},
  );
  const deps = await createDeps(config, createLogger('silent'), database);
  const workspace = await createWorkspace(database.db, { name: 'bench' });
  const key = await deps.apiKeys.mint(workspace.id, 'bench');
  const mnemo = await listen(createApp(deps));

  // Baseline: the same answers with nothing in between.
  const bare = express();
  bare.use(express.json());
  bare.get('/healthz', (_req, res) => {
    res.json(health(config));
  });
  bare.get('/v1/memories', (_req, res) => {
    res.json({ results: [], page: 1, page_size: 20, total: 0, has_more: false });
  });
  bare.post('/v1/search', (_req, res) => {
    res.json({ results: [], page: 1, page_size: 10, total: 0, has_more: false });
  });

  // One owner with SEARCH_MEMORIES memories to search through.
  const SEARCH_MEMORIES = Number(process.env.BENCH_SEARCH_MEMORIES ?? 300);
  const topics = [
    'coffee',
    'hiking',
    'invoice',
    'flight',
    'allergy',
    'piano',
    'garden',
    'salary',
    'doctor',
    'birthday',
  ];
  const seed = await listen(createApp(deps));
  for (let i = 0; i < SEARCH_MEMORIES; i += 1) {
    await fetch(`${seed.base}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.plaintext}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: 'bench-user',
        text: `Note ${i}: the user mentioned ${topics[i % 10]} and ${topics[(i * 7) % 10]} on day ${i % 31}`,
      }),
    }).then((res) => res.arrayBuffer());
  }
  seed.server.close();
  const baseline = await listen(bare);

  const auth = { authorization: `Bearer ${key.plaintext}` };
  const search = {
    query: 'when did the user talk about coffee and hiking?',
    user_id: 'bench-user',
  };
  const scenarios: Array<[string, string, string, Record<string, string>, unknown?]> = [
    ['GET /healthz', '/healthz', '/healthz', {}],
    ['GET /v1/memories (auth + DB read)', '/v1/memories', '/v1/memories', auth],
    [
      `POST /v1/search (hybrid, ${SEARCH_MEMORIES} memories)`,
      '/v1/search',
      '/v1/search',
      auth,
      search,
    ],
  ];

  const rows: Array<{ scenario: string; base: Result; ours: Result }> = [];
  for (const [scenario, path, basePath, headers, body] of scenarios) {
    await load('warmup', baseline.base + basePath, headers, WARMUP, body);
    await load('warmup', mnemo.base + path, headers, WARMUP, body);
    const base = await load(
      `${scenario} baseline`,
      baseline.base + basePath,
      headers,
      REQUESTS,
      body,
    );
    const ours = await load(`${scenario} mnemo`, mnemo.base + path, headers, REQUESTS, body);
    await deps.audit.drain();
    rows.push({ scenario, base, ours });
  }

  const fmt = (n: number, digits = 2) => n.toFixed(digits);
  console.log(
    `\nServer core on ${database.driver}, ${REQUESTS} requests per row, concurrency ${CONCURRENCY}\n`,
  );
  console.log('| scenario | server | p50 ms | p95 ms | req/s | p50 ratio | req/s ratio |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { scenario, base, ours } of rows) {
    console.log(
      `| ${scenario} | bare express (baseline) | ${fmt(base.p50)} | ${fmt(base.p95)} | ${fmt(base.rps, 0)} | 1.00 | 1.00 |`,
    );
    console.log(
      `| ${scenario} | mnemo | ${fmt(ours.p50)} | ${fmt(ours.p95)} | ${fmt(ours.rps, 0)} | ${fmt(ours.p50 / base.p50)} | ${fmt(ours.rps / base.rps)} |`,
    );
  }

  mnemo.server.close();
  baseline.server.close();
  await deps.audit.drain();
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

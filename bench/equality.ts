/**
 * Retrieval equality between two checkouts of the server: the same seeded data set, the same
 * fixed set of searches (every mode and profile, regular and heavy owners, with and without
 * filters, and context), answered by the server of this tree and by the server of another
 * (`BENCH_EQUALITY_BASE`, e.g. a checkout of the commit before a change), one after the other on
 * the same database, base first and last; every answer of this tree must be identical (same ids,
 * same order, same scores) to the base's answer before or after it (recency factors follow the
 * clock, so a score's last digit may move between runs of the same code). Exits 1 on any difference. On PostgreSQL and on PGlite.
 *
 *   BENCH_EQUALITY_BASE=/path/to/other/checkout pnpm --filter @mnemo/bench bench:equality
 *
 * Environment: `BENCH_EQUALITY_SIZE` (regular memories, default 10k; the heavy owner's 10k come
 * on top), `BENCH_EQUALITY_QUERIES` (questions, default 60), `BENCH_EQUALITY_BACKENDS`
 * (`postgres,pglite`), `BENCH_DATABASE_URL`, `BENCH_SEED`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openDatabase } from '../server/src/db/client.js';
import { localEmbedder } from './lib/embedder.js';
import { ApiKeyService } from '../server/src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../server/src/services/bootstrap.js';
import { bulkLoader } from './lib/bulk-load.js';
import { createBenchDatabase } from './lib/database.js';
import {
  HEAVY_MEMORIES,
  HEAVY_OWNER,
  REGULAR_OWNERS,
  heavyMemory,
  ownerName,
  questions,
  regularMemory,
} from './lib/generator.js';
import { REPO_ROOT, startServer } from './lib/server.js';

const BASE = process.env.BENCH_EQUALITY_BASE;
const SIZE = Number((process.env.BENCH_EQUALITY_SIZE ?? '10k').replace(/k$/i, '000'));
const QUERIES = Number(process.env.BENCH_EQUALITY_QUERIES ?? 60);
const BACKENDS = (process.env.BENCH_EQUALITY_BACKENDS ?? 'postgres,pglite').split(',');
const SEED = Number(process.env.BENCH_SEED ?? 42);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API_KEY = `mnemo_bench_${randomBytes(16).toString('hex')}`;
const log = (line: string) => process.stderr.write(`[equality] ${line}\n`);

interface Request {
  path: '/v1/search' | '/v1/context';
  body: Record<string, unknown>;
}

/** The fixed request set: each question in every mode and profile, for a regular and the heavy owner. */
function requests(): Request[] {
  const out: Request[] = [];
  const qs = questions(SEED, QUERIES);
  qs.forEach((query, i) => {
    const owner = ownerName((i * 37) % Math.min(SIZE, REGULAR_OWNERS));
    for (const user_id of [owner, HEAVY_OWNER]) {
      for (const search_mode of ['hybrid', 'vector', 'keyword'])
        for (const retrieval_profile of ['balanced', 'recall', 'precision'])
          out.push({
            path: '/v1/search',
            body: { query, user_id, search_mode, retrieval_profile, page_size: 50 },
          });
      // Filters change the statements' shape; a second page reads further down the ranking.
      out.push({
        path: '/v1/search',
        body: { query, user_id, top_k: 10, page: 2, filters: { memory_type: ['fact', 'event'] } },
      });
      out.push({ path: '/v1/context', body: { query, user_id, top_k: 10 } });
    }
  });
  return out;
}

async function answers(base: string, list: Request[]): Promise<string[]> {
  const out: string[] = [];
  for (const { path, body } of list) {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
    out.push(JSON.stringify(json));
  }
  return out;
}

interface Answer {
  results?: Array<{ memory_id: string; chunk_id: string; score: number }>;
  [key: string]: unknown;
}

/** Same answer but for scores, each between (or at) the base's two runs' scores. */
function bracketed(before: string, ours: string, after: string): boolean {
  const [a, o, b] = [before, ours, after].map((text) => JSON.parse(text) as Answer);
  const strip = (x: Answer) =>
    JSON.stringify({ ...x, results: x.results?.map((r) => ({ ...r, score: 0 })) });
  if (strip(o!) !== strip(a!) || strip(o!) !== strip(b!)) return false;
  return (o!.results ?? []).every((r, i) => {
    const [x, y] = [a!.results![i]!.score, b!.results![i]!.score];
    return r.score >= Math.min(x, y) && r.score <= Math.max(x, y);
  });
}

async function compare(env: Record<string, string>, label: string): Promise<number> {
  const list = requests();
  const run = async (root: string) => {
    const server = await startServer(env, 120_000, root);
    try {
      return await answers(server.base, list);
    } finally {
      await server.stop();
    }
  };
  const base = await run(resolve(BASE!));
  const ours = await run(REPO_ROOT);
  const again = await run(resolve(BASE!));
  let differ = 0;
  let unstable = 0;
  let drift = 0;
  list.forEach((request, i) => {
    // Scores hold a recency factor of the clock (rounded to 4 places), so two runs of the same
    // code may differ in a last digit: ours, run between the two, must equal one of them, or
    // hold the same results in the same order with each score between the two runs' scores.
    if (base[i] !== again[i]) unstable += 1;
    if (ours[i] === base[i] || ours[i] === again[i]) return;
    if (bracketed(base[i]!, ours[i]!, again[i]!)) {
      drift += 1;
      return;
    }
    differ += 1;
    if (differ <= 3)
      log(
        `${label}: differs: ${JSON.stringify(request.body)}\n  base ${base[i]}\n  ours ${ours[i]}`,
      );
  });
  const results = base.reduce(
    (n, text) => n + ((JSON.parse(text) as { results?: unknown[] }).results?.length ?? 0),
    0,
  );
  log(
    `${label}: ${list.length} requests (${results} search results), ${differ} differ; ${unstable} differ between the two runs of the base, ${drift} of ours only by scores between theirs (the clock)`,
  );
  return differ;
}

async function load(db: Awaited<ReturnType<typeof openDatabase>>['db']): Promise<void> {
  const apiKeys = await ApiKeyService.create(db);
  const boot = await ensureBootstrapWorkspace(db, apiKeys, {
    bootstrapApiKey: API_KEY,
    bootstrapWorkspaceName: 'bench',
  });
  const loader = bulkLoader(localEmbedder(), boot.workspaceId!);
  loader.attach(db);
  await loader.load(Array.from({ length: HEAVY_MEMORIES }, (_, i) => heavyMemory(SEED, i)));
  await loader.load(
    (function* () {
      for (let i = 0; i < SIZE; i += 1) yield regularMemory(SEED, i);
    })(),
  );
  log(`loaded ${loader.stored} memories`);
}

async function main(): Promise<void> {
  if (!BASE) throw new Error('set BENCH_EQUALITY_BASE to the checkout to compare with');
  const env = { MNEMO_BOOTSTRAP_API_KEY: API_KEY, MNEMO_BOOTSTRAP_WORKSPACE: 'bench' };
  let failures = 0;
  if (BACKENDS.includes('postgres')) {
    const bench = await createBenchDatabase(ADMIN_URL, undefined);
    try {
      const handle = await openDatabase({ databaseUrl: bench.databaseUrl });
      try {
        await load(handle.db);
      } finally {
        await handle.close();
      }
      failures += await compare({ ...env, DATABASE_URL: bench.databaseUrl }, 'postgres');
    } finally {
      await bench.drop();
    }
  }
  if (BACKENDS.includes('pglite')) {
    const dir = await mkdtemp(join(tmpdir(), 'mnemo-equality-'));
    try {
      const handle = await openDatabase({ dataDir: dir });
      try {
        await load(handle.db);
      } finally {
        await handle.close();
      }
      failures += await compare({ ...env, MNEMO_DATA_DIR: dir }, 'pglite');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  if (failures > 0) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

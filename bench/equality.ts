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
 * (`postgres,pglite`), `BENCH_DATABASE_URL`, `BENCH_SEED`. `BENCH_EQUALITY_DATA=long`: session-length
 * memories instead (`longMemory`, LONG_MEMORIES_PER_OWNER per owner, `BENCH_EQUALITY_SIZE` of them
 * in all, no heavy owner), each question asked of one long owner.
 *
 * `BENCH_EQUALITY_SEPARATE=1`: for a change of the stored data's shape (a migration the base does
 * not know, e.g. the embeddings' type), each server gets a database of its own, migrated by its
 * own tree and loaded with the same data. Ids and timestamps then differ, so answers are compared
 * without them (by texts, order and scores); a difference is reported with the overlap of the two
 * result lists and the largest score difference of the results both hold.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openDatabase } from '../server/src/db/client.js';
import { benchWorkspaceLoader, loadDataSet } from './lib/bulk-load.js';
import { createBenchDatabase } from './lib/database.js';
import {
  HEAVY_OWNER,
  LONG_MEMORIES_PER_OWNER,
  REGULAR_OWNERS,
  longOwnerName,
  ownerName,
  questions,
} from './lib/generator.js';
import { REPO_ROOT, startServer } from './lib/server.js';

const BASE = process.env.BENCH_EQUALITY_BASE;
const SIZE = Number((process.env.BENCH_EQUALITY_SIZE ?? '10k').replace(/k$/i, '000'));
const QUERIES = Number(process.env.BENCH_EQUALITY_QUERIES ?? 60);
const BACKENDS = (process.env.BENCH_EQUALITY_BACKENDS ?? 'postgres,pglite').split(',');
const SEED = Number(process.env.BENCH_SEED ?? 42);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API_KEY = `mnemo_bench_${randomBytes(16).toString('hex')}`;
const SEPARATE = process.env.BENCH_EQUALITY_SEPARATE === '1';
/** `regular` (regular owners and the heavy owner) or `long` (session-length memories only). */
const DATA = (process.env.BENCH_EQUALITY_DATA ?? 'regular') as 'regular' | 'long';
if (DATA !== 'regular' && DATA !== 'long')
  throw new Error(`BENCH_EQUALITY_DATA: regular or long, not ${DATA}`);
const log = (line: string) => process.stderr.write(`[equality] ${line}\n`);

interface Request {
  path: '/v1/search' | '/v1/context';
  body: Record<string, unknown>;
}

/**
 * The fixed request set: each question in every mode and profile, for a regular and the heavy
 * owner (for a long owner with the long data set).
 */
function requests(): Request[] {
  const out: Request[] = [];
  const qs = questions(SEED, QUERIES);
  const longOwners = Math.max(1, Math.floor(SIZE / LONG_MEMORIES_PER_OWNER));
  qs.forEach((query, i) => {
    const owners =
      DATA === 'long'
        ? [longOwnerName((i * 37) % longOwners)]
        : [ownerName((i * 37) % Math.min(SIZE, REGULAR_OWNERS)), HEAVY_OWNER];
    for (const user_id of owners) {
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

/** An answer without what differs between two databases of the same data: ids and timestamps. */
function withoutIdentity(text: string): string {
  return JSON.stringify(JSON.parse(text), (key, value: unknown) =>
    key === 'id' ||
    key.endsWith('_id') ||
    key.endsWith('_ids') ||
    key.endsWith('_at') ||
    key === 'request_id'
      ? undefined
      : value,
  );
}

/** A request's kind for the report: whose, and which path or search mode. */
const kindOf = (request: Request) =>
  `${request.body.user_id === HEAVY_OWNER ? 'heavy' : DATA === 'long' ? 'long' : 'owner'} ${request.path === '/v1/context' ? 'context' : String(request.body.search_mode ?? 'filtered')}`;

/** What two answers' result lists share: overlap of texts, largest score gap of shared texts. */
function resultGap(a: string, b: string): { overlap: number; scoreGap: number; size: number } {
  const results = (text: string) =>
    ((JSON.parse(text) as { results?: Array<{ text?: string; score: number }> }).results ?? []).map(
      (r) => ({ text: String(r.text), score: r.score }),
    );
  const [x, y] = [results(a), results(b)];
  const scoreOf = new Map(y.map((r) => [r.text, r.score]));
  let overlap = 0;
  let scoreGap = 0;
  for (const r of x) {
    const other = scoreOf.get(r.text);
    if (other === undefined) continue;
    overlap += 1;
    scoreGap = Math.max(scoreGap, Math.abs(other - r.score));
  }
  return { overlap, scoreGap, size: Math.max(x.length, y.length) };
}

async function compare(
  env: Record<string, string>,
  label: string,
  baseEnv: Record<string, string> = env,
): Promise<number> {
  const list = requests();
  const run = async (root: string) => {
    const server = await startServer(root === REPO_ROOT ? env : baseEnv, 120_000, root);
    try {
      return await answers(server.base, list);
    } finally {
      await server.stop();
    }
  };
  let base = await run(resolve(BASE!));
  let ours = await run(REPO_ROOT);
  let again = await run(resolve(BASE!));
  if (SEPARATE) {
    base = base.map(withoutIdentity);
    ours = ours.map(withoutIdentity);
    again = again.map(withoutIdentity);
  }
  let differ = 0;
  const gaps: Array<ReturnType<typeof resultGap> & { kind: string }> = [];
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
    if (SEPARATE) gaps.push({ ...resultGap(base[i]!, ours[i]!), kind: kindOf(request) });
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
  if (gaps.length > 0) {
    const sameSet = gaps.filter((g) => g.overlap === g.size).length;
    const meanOverlap = gaps.reduce((n, g) => n + g.overlap / Math.max(1, g.size), 0) / gaps.length;
    log(
      `${label}: of the ${gaps.length} that differ, ${sameSet} hold the same results (order or scores moved); mean overlap ${meanOverlap.toFixed(3)}, min ${Math.min(...gaps.map((g) => g.overlap / Math.max(1, g.size))).toFixed(2)}; largest score gap of a shared result ${Math.max(...gaps.map((g) => g.scoreGap)).toFixed(4)}`,
    );

    const kinds = [...new Set(gaps.map((g) => g.kind))].sort();
    for (const kind of kinds) {
      const of = gaps.filter((g) => g.kind === kind);
      const total = list.filter((request) => kindOf(request) === kind).length;
      log(
        `  ${kind}: ${of.length} of ${total} differ, ${of.filter((g) => g.overlap === g.size).length} with the same results; mean overlap ${(of.reduce((n, g) => n + g.overlap / Math.max(1, g.size), 0) / of.length).toFixed(3)}; largest score gap ${Math.max(...of.map((g) => g.scoreGap)).toFixed(4)}`,
      );
    }
  }
  return differ;
}

async function load(db: Awaited<ReturnType<typeof openDatabase>>['db']): Promise<void> {
  const loader = await benchWorkspaceLoader(db, API_KEY);
  await loadDataSet(loader, DATA, SIZE, SEED);
  log(`loaded ${loader.stored} memories`);
}

/** The base's schema on an empty database: its server migrates on start. */
async function migrateByBase(env: Record<string, string>): Promise<void> {
  const server = await startServer(env, 120_000, resolve(BASE!));
  await server.stop();
}

async function main(): Promise<void> {
  if (!BASE) throw new Error('set BENCH_EQUALITY_BASE to the checkout to compare with');
  const env = { MNEMO_BOOTSTRAP_API_KEY: API_KEY, MNEMO_BOOTSTRAP_WORKSPACE: 'bench' };
  let failures = 0;
  if (BACKENDS.includes('postgres')) {
    const bench = await createBenchDatabase(ADMIN_URL, undefined);
    const baseBench = SEPARATE ? await createBenchDatabase(ADMIN_URL, undefined) : undefined;
    try {
      if (baseBench) await migrateByBase({ ...env, DATABASE_URL: baseBench.databaseUrl });
      for (const target of [bench, baseBench]) {
        if (!target) continue;
        // No statement timeout: a loaded machine can take longer than the server's default over a batch.
        const handle = await openDatabase({
          databaseUrl: target.databaseUrl,
          migrate: target === bench,
          timeouts: { statementMs: 0, lockMs: 0 },
        });
        try {
          await load(handle.db);
        } finally {
          await handle.close();
        }
      }
      failures += await compare({ ...env, DATABASE_URL: bench.databaseUrl }, 'postgres', {
        ...env,
        DATABASE_URL: (baseBench ?? bench).databaseUrl,
      });
    } finally {
      await bench.drop();
      await baseBench?.drop();
    }
  }
  if (BACKENDS.includes('pglite')) {
    const dir = await mkdtemp(join(tmpdir(), 'mnemo-equality-'));
    const baseDir = SEPARATE ? await mkdtemp(join(tmpdir(), 'mnemo-equality-base-')) : undefined;
    try {
      if (baseDir) await migrateByBase({ ...env, MNEMO_DATA_DIR: baseDir });
      for (const target of [dir, baseDir]) {
        if (!target) continue;
        const handle = await openDatabase({ dataDir: target, migrate: target === dir });
        try {
          await load(handle.db);
        } finally {
          await handle.close();
        }
      }
      failures += await compare({ ...env, MNEMO_DATA_DIR: dir }, 'pglite', {
        ...env,
        MNEMO_DATA_DIR: baseDir ?? dir,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
      if (baseDir) await rm(baseDir, { recursive: true, force: true });
    }
  }
  if (failures > 0) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

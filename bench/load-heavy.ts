/**
 * Loads a database once for search experiments on heavy owners: the speed bench's data (the
 * regular memories over 1,000 owners) plus heavy owners, with the bulk loader, then `vacuum
 * analyze`. The database is kept (drop it yourself); its URL and workspace are printed.
 *
 *   BENCH_HEAVY_DATABASE=mnemo_heavy_x BENCH_HEAVY_SIZES=10k,100k pnpm --filter @mnemo/bench exec tsx --conditions=mnemo-source load-heavy.ts
 *
 * Environment: `BENCH_HEAVY_DATABASE` (name, required), `BENCH_HEAVY_REGULAR` (10k),
 * `BENCH_HEAVY_SIZES` (heavy owners' memory counts, `10k`: owner `heavy-owner` gets the first,
 * `heavy-owner-<size>` the others), `BENCH_SEED`, `BENCH_DATABASE_URL` (maintenance database),
 * `BENCH_HEAVY_API_KEY` (the bootstrap key, default `mnemo_bench_heavy_owners_key`: a server takes keys of 20 characters or more).
 */
import postgres from 'postgres';
import { openDatabase } from '../server/src/db/client.js';
import { benchWorkspaceLoader, withIndexesDeferred } from './lib/bulk-load.js';
import { HEAVY_OWNER, heavyMemory, regularMemory } from './lib/generator.js';

const count = (text: string) => Number(text.trim().replace(/k$/i, '000'));
const NAME = process.env.BENCH_HEAVY_DATABASE;
const REGULAR = count(process.env.BENCH_HEAVY_REGULAR ?? '10k');
const SIZES = (process.env.BENCH_HEAVY_SIZES ?? '10k').split(',').map(count);
const SEED = Number(process.env.BENCH_SEED ?? 42);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API_KEY = process.env.BENCH_HEAVY_API_KEY ?? 'mnemo_bench_heavy_owners_key';
/** From this many memories the load copies rows and builds the indexes once, at the end. */
const DEFER_INDEXES_FROM = 50_000;

async function main(): Promise<void> {
  if (!NAME || !/^[a-z_][a-z0-9_]*$/.test(NAME)) throw new Error('set BENCH_HEAVY_DATABASE');
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${NAME}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${NAME}`;
  const started = Date.now();
  const handle = await openDatabase({
    databaseUrl: url.toString(),
    migrate: true,
    timeouts: { statementMs: 0, lockMs: 0 },
  });
  // Large loads as the speed bench makes them: COPY, and the indexes built once at the end.
  const copy = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    const loader = await benchWorkspaceLoader(handle.db, API_KEY);
    const total = REGULAR + SIZES.reduce((sum, size) => sum + size, 0);
    if (total >= DEFER_INDEXES_FROM) loader.attach(handle.db, copy);
    const loadAll = async () => {
      for (const [n, size] of SIZES.entries()) {
        const owner = n === 0 ? HEAVY_OWNER : `${HEAVY_OWNER}-${size}`;
        await loader.load(
          (function* () {
            for (let i = 0; i < size; i += 1) yield { ...heavyMemory(SEED + n, i), ownerId: owner };
          })(),
        );
      }
      await loader.load(
        (function* () {
          for (let i = 0; i < REGULAR; i += 1) yield regularMemory(SEED, i);
        })(),
      );
    };
    if (total >= DEFER_INDEXES_FROM) {
      const { buildSeconds } = await withIndexesDeferred(handle.db, loadAll);
      process.stdout.write(`indexes built in ${buildSeconds.toFixed(0)} s\n`);
    } else await loadAll();
    process.stdout.write(
      `${url} workspace ${loader.workspaceId} stored ${loader.stored} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
    );
  } finally {
    await copy.end({ timeout: 5 });
    await handle.close();
  }
  const raw = postgres(url.toString(), { max: 1, onnotice: () => {} });
  await raw.unsafe('vacuum analyze');
  await raw.end();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

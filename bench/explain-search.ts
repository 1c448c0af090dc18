/**
 * Where PostgreSQL spends a search: the server's own one-statement search (`searchRecallStatement`,
 * as a hybrid search of the balanced profile sends it, episode neighbours included), run under
 * `EXPLAIN (ANALYZE, BUFFERS)` with the server's session settings for a set of questions, and
 * its time split by stage (planning, each recall's CTE, the neighbours, the rest), averaged.
 * EXPLAIN ANALYZE adds its own timing overhead; the split, not the sum, is the figure to read.
 *
 *   pnpm --filter @mnemo/bench bench:explain
 *
 * Environment: `BENCH_EXPLAIN_DATA` (`long`: session-length memories, 50 per owner, the default;
 * `regular`: the regular owners' short memories), `BENCH_EXPLAIN_SIZE` (memories, 2k),
 * `BENCH_EXPLAIN_QUERIES` (40), `BENCH_EXPLAIN_PLAN=1` (also print the first question's plan as
 * text), `BENCH_SEED`, `BENCH_DATABASE_URL`. The database is dropped after, unless
 * `BENCH_EXPLAIN_DATABASE` names one loaded before (by load-heavy.ts, e.g. a million memories):
 * then it is read as it is (`BENCH_EXPLAIN_SIZE` only sets how many owners are asked) and kept;
 * `BENCH_EXPLAIN_API_KEY` is its bootstrap key (load-heavy.ts's default).
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { SESSION_SETTINGS, openDatabase } from '../server/src/db/client.js';
import { searchRecallStatement } from '../server/src/db/queries/search-recall.js';
import { EPISODE_SPAN } from '../server/src/services/retrieval/episodes.js';
import { PROFILES } from '../server/src/services/retrieval/ranking.js';
import { benchWorkspaceLoader } from './lib/bulk-load.js';
import { createBenchDatabase } from './lib/database.js';
import { localEmbedder } from './lib/embedder.js';
import {
  LONG_MEMORIES_PER_OWNER,
  REGULAR_OWNERS,
  longMemoryAt,
  longOwnerName,
  ownerName,
  questions,
  regularMemory,
} from './lib/generator.js';
import { table } from './lib/stats.js';

const DATA = process.env.BENCH_EXPLAIN_DATA ?? 'long';
if (DATA !== 'regular' && DATA !== 'long')
  throw new Error(`BENCH_EXPLAIN_DATA: regular or long, not ${DATA}`);
const SIZE = Number((process.env.BENCH_EXPLAIN_SIZE ?? '2k').replace(/k$/i, '000'));
const QUERIES = Number(process.env.BENCH_EXPLAIN_QUERIES ?? 40);
const SEED = Number(process.env.BENCH_SEED ?? 42);
const PRINT_PLAN = process.env.BENCH_EXPLAIN_PLAN === '1';
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const KEPT_DATABASE = process.env.BENCH_EXPLAIN_DATABASE;
const KEPT_API_KEY = process.env.BENCH_EXPLAIN_API_KEY ?? 'mnemo_bench_heavy_owners_key';
/** The server's default episode window (MNEMO_EPISODE_WINDOW_MINUTES, 30). */
const EPISODE_WINDOW_SECONDS = 30 * 60;
const log = (line: string) => process.stderr.write(`[explain] ${line}\n`);

interface PlanNode {
  'Node Type': string;
  'Subplan Name'?: string;
  'Actual Total Time': number;
  'Actual Rows': number;
  'Actual Loops': number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}
interface Explained {
  Plan: PlanNode;
  'Planning Time': number;
  'Execution Time': number;
}

/**
 * Each materialized CTE of a plan (an InitPlan `CTE <name>`), named by its path (`keyword_hits /
 * matched`): its total time and rows. A CTE inlined into the statement (the neighbours) has no
 * node of its own; its time is in the rest.
 */
function stages(
  node: PlanNode,
  out = new Map<string, { ms: number; rows: number }>(),
  path = '',
): Map<string, { ms: number; rows: number }> {
  const name = node['Subplan Name']?.replace(/^CTE /, '');
  const here = name === undefined ? path : path ? `${path} / ${name}` : name;
  if (name !== undefined) {
    const known = out.get(here) ?? { ms: 0, rows: 0 };
    known.ms += node['Actual Total Time'] * node['Actual Loops'];
    known.rows += node['Actual Rows'] * node['Actual Loops'];
    out.set(here, known);
  }
  for (const child of node.Plans ?? []) stages(child, out, here);
  return out;
}

/** A fresh database to load, or the kept one named by BENCH_EXPLAIN_DATABASE. */
async function databaseToExplain(): Promise<{
  databaseUrl: string;
  apiKey: string;
  fresh: boolean;
  drop(): Promise<void>;
}> {
  if (KEPT_DATABASE) {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${KEPT_DATABASE}`;
    return {
      databaseUrl: url.toString(),
      apiKey: KEPT_API_KEY,
      fresh: false,
      drop: async () => {},
    };
  }
  const bench = await createBenchDatabase(ADMIN_URL, undefined);
  const apiKey = `mnemo_bench_${randomBytes(16).toString('hex')}`;
  return { databaseUrl: bench.databaseUrl, apiKey, fresh: true, drop: () => bench.drop() };
}

async function main(): Promise<void> {
  const bench = await databaseToExplain();
  const handle = await openDatabase({
    databaseUrl: bench.databaseUrl,
    migrate: true,
    timeouts: { statementMs: 0, lockMs: 0 },
  });
  const raw = postgres(bench.databaseUrl, {
    max: 1,
    onnotice: () => {},
    connection: { ...SESSION_SETTINGS, plan_cache_mode: 'force_custom_plan' },
  });
  try {
    const loader = await benchWorkspaceLoader(handle.db, bench.apiKey);
    if (bench.fresh) {
      const t0 = performance.now();
      await loader.load(
        (function* () {
          for (let i = 0; i < SIZE; i += 1)
            yield DATA === 'long' ? longMemoryAt(SEED, i) : regularMemory(SEED, i);
        })(),
        DATA === 'long' ? 100 : undefined,
      );
      log(`loaded ${loader.stored} memories in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      await raw.unsafe('vacuum analyze');
    }
    const owners =
      DATA === 'long'
        ? Math.max(1, Math.floor(SIZE / LONG_MEMORIES_PER_OWNER))
        : Math.min(SIZE, REGULAR_OWNERS);
    const embeddings = localEmbedder();
    const profile = PROFILES.balanced;
    const totals = new Map<string, { ms: number; rows: number }>();
    let planning = 0;
    let execution = 0;
    let hit = 0;
    let read = 0;
    const qs = questions(SEED, QUERIES);
    for (const [i, query] of qs.entries()) {
      const ownerId =
        DATA === 'long' ? longOwnerName((i * 37) % owners) : ownerName((i * 37) % owners);
      const [embedding] = await embeddings.embed([query], 'query');
      const statement = searchRecallStatement(
        handle.db,
        { workspaceId: loader.workspaceId, ownerType: 'user', ownerId, history: true },
        {
          embedding: embedding!,
          query,
          limit: profile.recallLimit,
          episodes: {
            windowSeconds: EPISODE_WINDOW_SECONDS,
            span: EPISODE_SPAN,
            seedsPerRecall: profile.episodeSeeds,
          },
        },
      )!;
      // The first run of each owner warms its pages; the second is measured.
      for (const measuredRun of [false, true]) {
        const [row] = await raw.unsafe(
          `explain (analyze, buffers, format json) ${statement.sql}`,
          statement.params as never[],
        );
        if (!measuredRun) continue;
        if (PRINT_PLAN && i === 0) {
          const text = await raw.unsafe(
            `explain (analyze, buffers) ${statement.sql}`,
            statement.params as never[],
          );
          process.stdout.write(
            `${text.map((line) => String(Object.values(line)[0])).join('\n')}\n\n`,
          );
        }
        const [explained] = Object.values(row!)[0] as Explained[];
        planning += explained!['Planning Time'];
        execution += explained!['Execution Time'];
        hit += explained!.Plan['Shared Hit Blocks'] ?? 0;
        read += explained!.Plan['Shared Read Blocks'] ?? 0;
        for (const [name, stage] of stages(explained!.Plan)) {
          const known = totals.get(name) ?? { ms: 0, rows: 0 };
          known.ms += stage.ms;
          known.rows += stage.rows;
          totals.set(name, known);
        }
      }
    }
    const n = qs.length;
    const outer = [...totals].filter(([name]) => !name.includes(' / '));
    const rest = execution - outer.reduce((sum, [, { ms }]) => sum + ms, 0);
    const rows: string[][] = [
      ['planning', (planning / n).toFixed(2), ''],
      ['execution', (execution / n).toFixed(2), ''],
      ['rest of execution (neighbours, union)', (rest / n).toFixed(2), ''],
      ...[...totals].map(([name, { ms, rows: count }]) => [
        `CTE ${name}`,
        (ms / n).toFixed(2),
        (count / n).toFixed(1),
      ]),
    ];
    process.stdout.write(
      `${DATA} memories, ${bench.fresh ? `${loader.stored} stored` : `database ${KEPT_DATABASE}`}, ${owners} owners; ${n} questions; ` +
        `buffers per search: ${(hit / n).toFixed(0)} hit, ${(read / n).toFixed(0)} read\n\n` +
        table(['stage', 'ms per search', 'rows per search'], rows) +
        '\n',
    );
  } finally {
    await raw.end({ timeout: 5 });
    await handle.close();
    await bench.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * What a hygiene run costs the searches it shares the process with: one server (in this process,
 * as it runs in production, over embedded PGlite) with a few thousand memories in crowded spaces,
 * searched at concurrency 4 in alternating blocks, with no job running ("quiet") and with hygiene
 * running dry runs back to back over every memory ("hygiene"), so load that comes and goes on
 * this shared machine falls on both alike. A dry run reads and compares exactly what a real run
 * does; it only skips the few small write transactions, so the data stays the same block to block.
 *
 *   pnpm --filter @mnemo/bench bench:jobs
 *
 * Environment: BENCH_JOBS_OWNERS (owners, default 10), BENCH_JOBS_PER_OWNER (memories each, 400:
 * 4,000 in all, compared in spaces of up to 300), BENCH_JOBS_BLOCKS (blocks per phase, 6),
 * BENCH_JOBS_BLOCK (searches per block, 60), BENCH_RESULTS=off (leave results/ alone).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createApp, mcpSessionStore } from '../server/src/app.js';
import { loadConfig } from '../server/src/config.js';
import { openDatabase } from '../server/src/db/client.js';
import { createWorkspace } from '../server/src/db/queries/workspaces.js';
import { memories } from '../server/src/db/schema/index.js';
import { createDeps } from '../server/src/deps.js';
import { eventOutbox } from '../server/src/db/queries/events.js';
import { runHygiene } from '../server/src/jobs/hygiene.js';
import { createLogger } from '../server/src/logger.js';
import { canonicalHash } from '../server/src/text/canonical.js';
import { REPO_ROOT } from './lib/server.js';
import { ms, summarise, table, timeLoad } from './lib/stats.js';

const OWNERS = Number(process.env.BENCH_JOBS_OWNERS ?? 10);
const PER_OWNER = Number(process.env.BENCH_JOBS_PER_OWNER ?? 400);
const BLOCKS = Number(process.env.BENCH_JOBS_BLOCKS ?? 6);
const BLOCK = Number(process.env.BENCH_JOBS_BLOCK ?? 60);
const CONCURRENCY = 4;

/** A pseudo-random sentence of 24 words from a 3,000-word vocabulary. */
function sentence(seed: number): string {
  let x = seed * 2654435761;
  const words: string[] = [];
  for (let i = 0; i < 24; i += 1) {
    x = (x * 1103515245 + 12345) % 2147483648;
    words.push(`w${x % 3000}`);
  }
  return words.join(' ');
}

async function main(): Promise<void> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MNEMO_HYGIENE_INTERVAL_MS: '0',
    MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '1000000',
    MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '1000000',
    MNEMO_INFLIGHT_PER_WORKSPACE: '1000',
  });
  const database = await openDatabase({});
  const deps = await createDeps(config, createLogger('silent'), database);
  const app = createApp(deps, mcpSessionStore(deps));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const workspace = await createWorkspace(database.db, { name: 'bench-jobs' });
  const key = (await deps.apiKeys.mint(workspace.id, 'bench')).plaintext;
  for (let owner = 0; owner < OWNERS; owner += 1) {
    const rows = Array.from({ length: PER_OWNER }, (_, i) => {
      const text =
        i % 40 === 39 ? sentence(owner * PER_OWNER + i - 20) : sentence(owner * PER_OWNER + i);
      return {
        workspaceId: workspace.id,
        ownerId: `owner-${owner}`,
        ownerType: 'user',
        text,
        contentHash: canonicalHash(text),
        createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000),
      };
    });
    for (let i = 0; i < rows.length; i += 500)
      await database.db.insert(memories).values(rows.slice(i, i + 500));
  }

  const search = async (i: number) => {
    const res = await fetch(`${baseUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        query: sentence(i).split(' ').slice(0, 4).join(' '),
        owner_id: `owner-${i % OWNERS}`,
        owner_type: 'user',
      }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`search answered ${res.status}`);
  };
  // Warm-up: plans, caches and the JIT, for both phases alike.
  await timeLoad(0, 100, CONCURRENCY, search);
  const hygieneOnce = () =>
    runHygiene(
      { db: database.db, events: eventOutbox },
      { dryRun: true, limit: 100_000, nearThreshold: 0.9, budgetMs: 0 },
    );
  const single = performance.now();
  const report = await hygieneOnce();
  const runMs = performance.now() - single;

  const quiet: number[] = [];
  const during: number[] = [];
  let runs = 0;
  for (let block = 0; block < BLOCKS * 2; block += 1) {
    // Alternate which phase goes first, so a drift in load falls on both.
    const withHygiene = (block + Math.floor(block / 2)) % 2 === 1;
    let running = withHygiene;
    const job = (async () => {
      while (running) {
        await hygieneOnce();
        runs += 1;
      }
    })();
    const from = block * BLOCK;
    const { latencies } = await timeLoad(from, from + BLOCK, CONCURRENCY, search);
    running = false;
    await job;
    (withHygiene ? during : quiet).push(...latencies);
  }

  const a = summarise(quiet, 1);
  const b = summarise(during, 1);
  const lines = [
    `# Jobs: a hygiene run's cost to concurrent searches (${new Date().toISOString().slice(0, 10)})`,
    '',
    `PGlite in process; ${OWNERS * PER_OWNER} memories (${OWNERS} owners × ${PER_OWNER}, spaces ` +
      `compared up to 300); hybrid search at concurrency ${CONCURRENCY}, ${BLOCKS} blocks of ` +
      `${BLOCK} per phase, alternating; hygiene as back-to-back dry runs (${runs} during the ` +
      `hygiene blocks). One run alone: ${ms(runMs)} ms, scanned ${report.scanned}, ` +
      `${report.duplicates.count} duplicates. Machine: ${cpus().length} cores, load ` +
      `${loadavg()[0]?.toFixed(1)} at the end.`,
    '',
    table(
      ['phase', 'searches', 'p50 ms', 'p95 ms', 'p99 ms'],
      [
        ['quiet', String(a.count), ms(a.p50), ms(a.p95), ms(a.p99)],
        ['hygiene running', String(b.count), ms(b.p50), ms(b.p95), ms(b.p99)],
        ['added', '', ms(b.p50 - a.p50), ms(b.p95 - a.p95), ms(b.p99 - a.p99)],
      ],
    ),
    '',
    'Goal (issue 33): a hygiene run adds < 50 ms to search p99.',
  ];
  const text = lines.join('\n') + '\n';
  process.stdout.write(text);
  if (process.env.BENCH_RESULTS !== 'off') {
    const dir = join(REPO_ROOT, 'bench', 'results');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `jobs-${new Date().toISOString().slice(0, 10)}.md`), text);
    await writeFile(join(dir, 'jobs-latest.md'), text);
  }
  server.close();
  await deps.background.drain();
  await deps.audit.drain();
  await deps.limits.close();
  await database.close();
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});

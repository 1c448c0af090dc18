/**
 * What each recall statement costs PostgreSQL when an owner's chunks are scanned and when the
 * indexes are read: the choice `SCANNED_OWNER_CHUNKS` (server/src/db/queries/recall.ts) makes.
 * On a database loaded by `load-heavy.ts`, for each owner named, runs the server's vector and
 * keyword recall statements with the scan forced and with the indexes forced, in alternating
 * blocks on one connection, and reads that backend's CPU around each block. Also says whether
 * the two give the same rows: keyword recall must; the HNSW index is approximate, so for vectors
 * it gives the index's recall@10 against the scan.
 *
 *   BENCH_BRANCH_DATABASE=mnemo_heavy_1m BENCH_BRANCH_OWNERS=owner-0001,heavy-owner pnpm --filter @mnemo/bench exec tsx --conditions=mnemo-source recall-branches.ts
 *
 * Environment: `BENCH_BRANCH_DATABASE` (required), `BENCH_BRANCH_OWNERS` (owner ids),
 * `BENCH_BRANCH_QUESTIONS` (40), `BENCH_BRANCH_ROUNDS` (4, the first discarded),
 * `BENCH_DATABASE_URL` (maintenance database), `BENCH_SEED`.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import type { SQL } from 'drizzle-orm';
import postgres from 'postgres';
import { SESSION_SETTINGS } from '../server/src/db/client.js';
import {
  keywordRecallQuery,
  vectorRecallQuery,
  type RecallFilter,
} from '../server/src/db/queries/recall.js';
import * as schema from '../server/src/db/schema/index.js';
import { cpuMs } from './lib/cpu.js';
import { localEmbedder } from './lib/embedder.js';
import { questions } from './lib/generator.js';
import { table } from './lib/stats.js';

const NAME = process.env.BENCH_BRANCH_DATABASE;
const OWNERS = (process.env.BENCH_BRANCH_OWNERS ?? 'owner-0001,heavy-owner')
  .split(',')
  .map((owner) => owner.trim());
const QUESTIONS = Number(process.env.BENCH_BRANCH_QUESTIONS ?? 40);
const ROUNDS = Number(process.env.BENCH_BRANCH_ROUNDS ?? 4);
const SEED = Number(process.env.BENCH_SEED ?? 42);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const LIMIT = 50;
/** Scan every owner / no owner. */
const BRANCHES = { scan: Number.MAX_SAFE_INTEGER, index: 0 } as const;
type Branch = keyof typeof BRANCHES;

async function main(): Promise<void> {
  if (!NAME) throw new Error('set BENCH_BRANCH_DATABASE');
  const url = new URL(ADMIN_URL);
  url.pathname = `/${NAME}`;
  const client = postgres(url.toString(), {
    max: 1,
    onnotice: () => {},
    connection: SESSION_SETTINGS,
  });
  const db = drizzle({ client, schema });
  const embedder = localEmbedder();
  const qs = questions(SEED, QUESTIONS);
  const embeddings = qs.map((q) => embedder.embedOne(q));
  const [backend] = await client<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const pid = backend!.pid;
  const out: string[][] = [];
  try {
    for (const ownerId of OWNERS) {
      const [owner] = await client<{ workspace_id: string; chunks: number }[]>`
        select workspace_id, chunks from owner_chunk_counts where owner_id = ${ownerId} limit 1`;
      if (!owner) throw new Error(`no chunks of ${ownerId}`);
      const filter: RecallFilter = {
        workspaceId: owner.workspace_id,
        ownerType: 'user',
        ownerId,
        history: true,
      };
      const statements: Record<'vector' | 'keyword', (branch: Branch, i: number) => SQL> = {
        vector: (branch, i) =>
          vectorRecallQuery(db, filter, embeddings[i]!, LIMIT, {
            scannedOwnerChunks: BRANCHES[branch],
          }),
        keyword: (branch, i) =>
          keywordRecallQuery(db, filter, qs[i]!, LIMIT, { scannedOwnerChunks: BRANCHES[branch] }),
      };
      for (const [kind, statement] of Object.entries(statements)) {
        const cost: Record<Branch, { cpu: number; wall: number; count: number }> = {
          scan: { cpu: 0, wall: 0, count: 0 },
          index: { cpu: 0, wall: 0, count: 0 },
        };
        const rows: Record<Branch, string[][]> = { scan: [], index: [] };
        for (let round = 0; round < ROUNDS; round += 1) {
          const order: Branch[] = round % 2 ? ['index', 'scan'] : ['scan', 'index'];
          for (const branch of order) {
            const cpu0 = await cpuMs(pid);
            const t0 = performance.now();
            for (let i = 0; i < qs.length; i += 1) {
              const result = (await db.execute(statement(branch, i))) as unknown as Array<{
                id?: string;
                chunk_id?: string;
                distance?: unknown;
                rank?: unknown;
              }>;
              if (round === 0)
                rows[branch][i] = result.map(
                  (row) => `${row.id ?? row.chunk_id} ${String(row.rank ?? '')}`,
                );
            }
            if (round === 0) continue;
            cost[branch].wall += performance.now() - t0;
            cost[branch].cpu += (await cpuMs(pid)) - cpu0;
            cost[branch].count += qs.length;
          }
        }
        const agreement =
          kind === 'keyword'
            ? `${qs.filter((_, i) => rows.scan[i]!.join('|') === rows.index[i]!.join('|')).length}/${qs.length} identical`
            : `recall@10 ${(
                qs.reduce((sum, _, i) => {
                  const exact = new Set(rows.scan[i]!.slice(0, 10));
                  const found = rows.index[i]!.slice(0, 10).filter((id) => exact.has(id)).length;
                  return sum + (exact.size ? found / exact.size : 1);
                }, 0) / qs.length
              ).toFixed(3)}`;
        out.push([
          ownerId,
          String(owner.chunks),
          kind,
          ...(['scan', 'index'] as const).flatMap((branch) => [
            (cost[branch].cpu / cost[branch].count).toFixed(2),
            (cost[branch].wall / cost[branch].count).toFixed(2),
          ]),
          agreement,
        ]);
        process.stderr.write(`[branches] ${ownerId} ${kind} done\n`);
      }
    }
    process.stdout.write(
      table(
        [
          'owner',
          'chunks',
          'recall',
          'scan CPU ms',
          'scan ms',
          'index CPU ms',
          'index ms',
          'index vs scan',
        ],
        out,
      ) + '\n',
    );
  } finally {
    await client.end({ timeout: 5 });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

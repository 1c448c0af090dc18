/**
 * Search throughput with reads on a streaming replica beside reads on the primary, in one run:
 * a cluster (scripts/cluster.ts) with a PostgreSQL primary, a replica and two Mnemo instances,
 * one with `DATABASE_READ_URL` (its searches read from the replica) and one without (its
 * searches read from the primary). The same searches go to both in alternating blocks (the order
 * rotating block by block), so load that comes and goes on this shared machine falls on both
 * alike. Per target: searches per second, p50 and p95 latency, and the CPU the searches cost the
 * primary's and the replica's PostgreSQL (/proc/<pid>/stat of their backends), which says where
 * the read work went.
 *
 *   nice -n 10 npx tsx --conditions=mnemo-source bench/replica-reads.ts
 *
 * Environment: BENCH_REPLICA_MEMORIES (memories loaded, default 200 over 20 owners),
 * BENCH_REPLICA_BLOCKS (blocks per target, default 4), BENCH_REPLICA_BLOCK (searches per block,
 * default 50), BENCH_REPLICA_CONCURRENCY (default 4), BENCH_RESULTS=off (leave results/ alone).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { startCluster, type Cluster } from '../scripts/cluster.js';

const MEMORIES = Number(process.env.BENCH_REPLICA_MEMORIES ?? 200);
const OWNERS = Math.max(1, Math.round(MEMORIES / 10));
const BLOCKS = Number(process.env.BENCH_REPLICA_BLOCKS ?? 4);
const BLOCK = Number(process.env.BENCH_REPLICA_BLOCK ?? 50);
const CONCURRENCY = Number(process.env.BENCH_REPLICA_CONCURRENCY ?? 4);

const TOPICS = ['tea', 'trains', 'Lisbon', 'the dentist', 'piano lessons', 'the garden', 'salsa'];
const QUERIES = ['what does she drink', 'travel plans', 'appointments', 'music', 'weekend'];

type Target = 'replica' | 'primary';

async function post(base: string, key: string, path: string, body: unknown): Promise<number> {
  const send = () =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  // A kept-alive socket the server closed as it was reused fails the fetch: once more anew.
  const response = await send().catch(() => send());
  await response.arrayBuffer();
  return response.status;
}

/** CPU seconds used so far by every process of a PostgreSQL data folder (its backends included). */
function postgresCpuSeconds(dataDir: string): number {
  const postmaster = execFileSync('head', ['-1', join(dataDir, 'postmaster.pid')], {
    encoding: 'utf8',
  }).trim();
  const children = execFileSync('pgrep', ['-P', postmaster], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  const ticks = [postmaster, ...children].reduce((sum, pid) => {
    try {
      const fields = execFileSync('cat', [`/proc/${pid}/stat`], { encoding: 'utf8' })
        .split(') ')[1]!
        .split(' ');
      return sum + Number(fields[11]) + Number(fields[12]);
    } catch {
      return sum;
    }
  }, 0);
  return ticks / 100;
}

async function block(base: string, key: string, count: number, latencies: number[]) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const started = performance.now();
      const status = await post(base, key, '/v1/search', {
        query: QUERIES[index % QUERIES.length],
        owner_id: `owner-${index % OWNERS}`,
      });
      if (status !== 200) throw new Error(`search answered ${status}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

async function main(): Promise<void> {
  process.stderr.write('starting the cluster (primary, replica, 2 instances)…\n');
  const cluster: Cluster = await startCluster({
    instances: 2,
    sentinel: false,
    env: {
      MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '1000000',
      MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '1000000',
      MNEMO_INFLIGHT_PER_WORKSPACE: '1000',
      MNEMO_EXTRACTION_PROVIDER: 'none',
      LOG_LEVEL: 'warn',
    },
    // Instance 1 reads from the primary: the same server, no read URL.
    instanceEnv: (index): Record<string, string> => (index === 1 ? { DATABASE_READ_URL: '' } : {}),
  });
  try {
    const { apiKey: key, instances, primary, replica } = cluster.state;
    const bases: Record<Target, string> = {
      replica: instances[0]!.url,
      primary: instances[1]!.url,
    };
    process.stderr.write(`loading ${MEMORIES} memories over ${OWNERS} owners…\n`);
    for (let index = 0; index < MEMORIES; index += 1) {
      const topic = TOPICS[index % TOPICS.length];
      const status = await post(bases.primary, key, '/v1/memories', {
        text: `Note ${index}: the user mentioned ${topic} on day ${index % 30}.`,
        owner_id: `owner-${index % OWNERS}`,
      });
      if (status !== 200) throw new Error(`write answered ${status}`);
    }
    // Let the replica replay everything and warm both paths.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const target of ['replica', 'primary'] as const)
      await block(bases[target], key, BLOCK, []);

    const latencies: Record<Target, number[]> = { replica: [], primary: [] };
    const seconds: Record<Target, number> = { replica: 0, primary: 0 };
    const cpu: Record<Target, { primary: number; replica: number }> = {
      replica: { primary: 0, replica: 0 },
      primary: { primary: 0, replica: 0 },
    };
    for (let round = 0; round < BLOCKS; round += 1) {
      const order: Target[] = round % 2 === 0 ? ['replica', 'primary'] : ['primary', 'replica'];
      for (const target of order) {
        const before = {
          primary: postgresCpuSeconds(primary.dataDir),
          replica: postgresCpuSeconds(replica!.dataDir),
        };
        const started = performance.now();
        await block(bases[target], key, BLOCK, latencies[target]);
        seconds[target] += (performance.now() - started) / 1000;
        cpu[target].primary += postgresCpuSeconds(primary.dataDir) - before.primary;
        cpu[target].replica += postgresCpuSeconds(replica!.dataDir) - before.replica;
      }
    }
    const rows = (['replica', 'primary'] as const).map((target) => {
      const count = latencies[target].length;
      return {
        target,
        searches: count,
        perSecond: count / seconds[target],
        p50: percentile(latencies[target], 50),
        p95: percentile(latencies[target], 95),
        primaryCpuMsPerSearch: (cpu[target].primary * 1000) / count,
        replicaCpuMsPerSearch: (cpu[target].replica * 1000) / count,
      };
    });
    const table = [
      '| reads on | searches | searches/s | p50 ms | p95 ms | primary PG CPU ms/search | replica PG CPU ms/search |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows.map(
        (row) =>
          `| ${row.target} | ${row.searches} | ${row.perSecond.toFixed(1)} | ${row.p50.toFixed(1)} | ${row.p95.toFixed(1)} | ${row.primaryCpuMsPerSearch.toFixed(2)} | ${row.replicaCpuMsPerSearch.toFixed(2)} |`,
      ),
    ].join('\n');
    const report = [
      `# Search reads on a replica beside the primary (${new Date().toISOString().slice(0, 10)})`,
      '',
      `bench/replica-reads.ts: one cluster (PostgreSQL 15 primary + streaming replica on loopback,`,
      `two Mnemo instances: one with DATABASE_READ_URL, one without), ${MEMORIES} memories over`,
      `${OWNERS} owners, ${BLOCKS} alternating blocks of ${BLOCK} hybrid searches per target at`,
      `concurrency ${CONCURRENCY}. Machine: ${cpus().length} cores shared with other work (load`,
      `average at the end ${loadavg()[0]!.toFixed(1)}), so absolute numbers are noisy; the CPU`,
      `columns say where the read work went.`,
      '',
      table,
      '',
    ].join('\n');
    process.stdout.write(report);
    if (process.env.BENCH_RESULTS !== 'off') {
      const folder = new URL('./results/', import.meta.url);
      await mkdir(folder, { recursive: true });
      const day = new Date().toISOString().slice(0, 10);
      await writeFile(new URL(`replica-reads-${day}.md`, folder), report);
    }
  } finally {
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

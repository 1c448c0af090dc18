/**
 * What a binary-quantized HNSW index would save, and what it costs in recall: on a bulk-loaded
 * PostgreSQL database (regular owners plus the heavy owner), beside the server's HNSW over
 * `halfvec(384)`, an HNSW over `binary_quantize(embedding)::bit(384)` (Hamming distance), read for
 * RESCORE × the limit candidates that are then ordered again by exact cosine over the stored
 * halfvec. Prints index sizes and build times, database KiB per memory with either index, and
 * recall@10 of both statements against exact search (lib/vector-recall.ts) for the heavy owner,
 * whose searches use the index, with each statement's latency. An experiment, not a server path.
 *
 *   BENCH_QUANT_SIZE=100k BENCH_QUANT_RESCORE=4 tsx --conditions=mnemo-source quantized-index.ts
 */
import postgres from 'postgres';
import { SESSION_SETTINGS } from '../server/src/db/client.js';
import { openDatabase } from '../server/src/db/client.js';
import { ApiKeyService } from '../server/src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../server/src/services/bootstrap.js';
import { bulkLoader, withIndexesDeferred } from './lib/bulk-load.js';
import { createBenchDatabase } from './lib/database.js';
import { localEmbedder } from './lib/embedder.js';
import { vectorSql, type Execute } from './lib/floor.js';
import {
  HEAVY_MEMORIES,
  HEAVY_OWNER,
  heavyMemory,
  questions,
  regularMemory,
} from './lib/generator.js';
import { percentile } from './lib/stats.js';
import { vectorStageRecall } from './lib/vector-recall.js';

const SIZE = Number((process.env.BENCH_QUANT_SIZE ?? '100k').replace(/k$/i, '000'));
const RESCORE = Number(process.env.BENCH_QUANT_RESCORE ?? 4);
const SEED = 42;
const DIMENSION = 384;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const log = (line: string) => process.stderr.write(`[quantized] ${line}\n`);

const t = `halfvec(${DIMENSION})`;
const quantized = (value: string) => `binary_quantize(${value})::bit(${DIMENSION})`;
const BIT_INDEX = `create index memory_chunks_embedding_${DIMENSION}_bit_hnsw on memory_chunks
  using hnsw ((${quantized(`"embedding"::${t}`)}) bit_hamming_ops) where "embedding_dimension" = ${DIMENSION}`;

/**
 * The server's vector statement with the quantized index: the same rows and columns, the
 * candidates taken by Hamming distance and ordered again by exact cosine.
 */
function quantizedSql(): string {
  const exact = vectorSql(DIMENSION);
  const [head, order] = exact.split(' order by distance limit $5');
  if (order === undefined) throw new Error('vector statement changed shape');
  return `select * from (${head} order by ${quantized(`"memory_chunks"."embedding"::${t}`)} <~> ${quantized(`$1::${t}`)}
    limit $5 * ${RESCORE}) as candidates order by distance limit $5`;
}

async function main(): Promise<void> {
  const bench = await createBenchDatabase(ADMIN_URL, undefined);
  const raw = postgres(bench.databaseUrl, {
    max: 2,
    onnotice: () => {},
    connection: SESSION_SETTINGS,
  });
  const handle = await openDatabase({
    databaseUrl: bench.databaseUrl,
    timeouts: { statementMs: 0, lockMs: 0 },
  });
  try {
    const apiKeys = await ApiKeyService.create(handle.db);
    const { workspaceId } = await ensureBootstrapWorkspace(handle.db, apiKeys, {
      bootstrapApiKey: `mnemo_bench_${'q'.repeat(32)}`,
      bootstrapWorkspaceName: 'bench',
    });
    const loader = bulkLoader(localEmbedder(), workspaceId!);
    loader.attach(handle.db, raw);
    const t0 = performance.now();
    await withIndexesDeferred(handle.db, async () => {
      await loader.load(
        Array.from({ length: HEAVY_MEMORIES }, (_, i) => heavyMemory(SEED, i)),
        2000,
      );
      await loader.load(
        (function* () {
          for (let i = 0; i < SIZE; i += 1) yield regularMemory(SEED, i);
        })(),
        2000,
      );
    });
    log(`loaded ${loader.stored} memories in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await raw.unsafe('vacuum analyze');
    const b0 = performance.now();
    await raw.begin(async (tx) => {
      await tx.unsafe(`set local maintenance_work_mem = '2GB'`);
      await tx.unsafe(BIT_INDEX);
    });
    const bitBuild = (performance.now() - b0) / 1000;
    await raw.unsafe('analyze memory_chunks');
    const [sizes] = await raw<{ db: string; halfvec: string; bit: string }[]>`
      select pg_database_size(current_database())::text as db,
        pg_relation_size('memory_chunks_embedding_384_hnsw')::text as halfvec,
        pg_relation_size('memory_chunks_embedding_384_bit_hnsw')::text as bit`;
    const db = Number(sizes!.db);
    const halfvec = Number(sizes!.halfvec);
    const bit = Number(sizes!.bit);
    const kib = (bytes: number) => (bytes / 1024 / loader.stored).toFixed(2);

    const owner = { workspaceId: workspaceId!, ownerType: 'user', ownerId: HEAVY_OWNER };
    const qs = questions(SEED + 1, 100);
    const embeddings = localEmbedder();
    const timings = { halfvec: [] as number[], bit: [] as number[] };
    const executor =
      (which: 'halfvec' | 'bit'): Execute =>
      async (q, p) => {
        const text = which === 'bit' && q === vectorSql(DIMENSION) ? quantizedSql() : q;
        const s = performance.now();
        const rows = await raw.unsafe(text, p as never[]);
        if (q === vectorSql(DIMENSION)) timings[which].push(performance.now() - s);
        return rows as never;
      };
    const exact = await vectorStageRecall(executor('halfvec'), embeddings, owner, qs);
    const approx = await vectorStageRecall(executor('bit'), embeddings, owner, qs);
    const params = (await embeddings.embed(['x'], 'query'))[0]!;
    const explainLines = async (q: string) =>
      (
        await raw.unsafe(`explain ${q}`, [
          `[${params.join(',')}]`,
          owner.workspaceId,
          'user',
          HEAVY_OWNER,
          50,
        ] as never[])
      ).map((row) => String(Object.values(row)[0]));
    const plans: Record<string, string[]> = {
      halfvec: await explainLines(vectorSql(DIMENSION)),
      bit: await explainLines(quantizedSql()),
    };
    const p50 = (values: number[]) =>
      percentile(
        [...values].sort((a, b) => a - b),
        50,
      ).toFixed(2);
    process.stdout.write(
      [
        `memories ${loader.stored} (${SIZE} regular + heavy owner ${HEAVY_MEMORIES}); rescore ×${RESCORE}`,
        `database ${((db - bit) / 2 ** 20).toFixed(1)} MiB = ${kib(db - bit)} KiB per memory with the halfvec HNSW (the server's)`,
        `halfvec HNSW ${(halfvec / 2 ** 20).toFixed(1)} MiB (${kib(halfvec)} KiB per memory)`,
        `bit HNSW ${(bit / 2 ** 20).toFixed(1)} MiB (${kib(bit)} KiB per memory), built in ${bitBuild.toFixed(1)} s`,
        `database with the bit index instead: ${kib(db - halfvec)} KiB per memory`,
        `heavy owner recall@10 (100 queries): halfvec ${exact.mean.toFixed(4)} (min ${exact.min.toFixed(2)}), bit+rescore ${approx.mean.toFixed(4)} (min ${approx.min.toFixed(2)})`,
        `heavy owner statement p50 ms: halfvec ${p50(timings.halfvec)}, bit+rescore ${p50(timings.bit)}`,
        `indexes in the plans: ${['halfvec', 'bit']
          .map(
            (w) =>
              `${w} ${
                plans[w]!.filter((l) => l.includes('_hnsw'))
                  .map((l) => l.trim().split(' on ')[0])
                  .join('; ') || 'none (exact scan)'
              }`,
          )
          .join(', ')}`,
      ].join('\n') + '\n',
    );
  } finally {
    await handle.close();
    await raw.end({ timeout: 5 });
    await bench.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

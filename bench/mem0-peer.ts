/**
 * The peer: mem0's open-source memory (`mem0ai/oss`) on the same synthetic data (the regular
 * owners' memories; see below why not the heavy owner's), with Mnemo's
 * local embedder fed through mem0's langchain embedder hook, `infer: false` (no LLM call),
 * telemetry off and its data folder in a temporary directory. Vector store (BENCH_MEM0_STORE): its
 * local "memory" store (SQLite, the default) or "pgvector" (its PostgreSQL store with an HNSW
 * index, in the database BENCH_MEM0_DATABASE_URL names), the fairer peer for Mnemo on
 * PostgreSQL. Run as a child of speed.ts (a native-module crash must not take the run with it);
 * prints one JSON line: add and search latencies per size. mem0ai is installed into bench/.peer by
 * prepare-peer.mjs (outside the workspace; see there why).
 *
 *   node prepare-peer.mjs && BENCH_MEM0_SIZES=1k,10k tsx --conditions=mnemo-source mem0-peer.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { localEmbedder } from './lib/embedder.js';
import { ownerName, questions, regularMemory, REGULAR_OWNERS } from './lib/generator.js';
import { runLoad, summarise, type Measured } from './lib/stats.js';

export type PeerStore = 'memory' | 'pgvector';

export interface PeerSize {
  size: number;
  memories: number;
  add: Measured;
  searchOwner: Measured;
  /** Mean results per owner search (top 10 asked; an owner holds about size ÷ 1,000 memories). */
  resultsPerSearch: number;
}

/** The part of mem0's `Memory` this benchmark uses (mem0ai is installed outside the workspace). */
interface Mem0Memory {
  add(text: string, options: { userId: string; infer: boolean }): Promise<unknown>;
  search(
    query: string,
    options: { filters: Record<string, string>; topK: number },
  ): Promise<unknown>;
}
type Mem0Constructor = new (config: Record<string, unknown>) => Mem0Memory;

async function importMem0(): Promise<Mem0Constructor> {
  // Installed by prepare-peer.mjs into bench/.peer.
  const require = createRequire(join(import.meta.dirname, '.peer', 'package.json'));
  const module = (await import(pathToFileURL(require.resolve('mem0ai/oss')).href)) as {
    Memory?: Mem0Constructor;
    default?: { Memory?: Mem0Constructor };
  };
  const Memory = module.Memory ?? module.default?.Memory;
  if (!Memory) throw new Error('mem0ai/oss has no Memory export');
  return Memory;
}

const parseSize = (s: string) => Number(s.trim().toLowerCase().replace(/k$/, '000'));

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_MEM0_SIZES ?? '1k,10k').split(',').map(parseSize);
  const seed = Number(process.env.BENCH_SEED ?? 42);
  const searches = Number(process.env.BENCH_SEARCHES ?? 200);
  const store = (process.env.BENCH_MEM0_STORE ?? 'memory') as PeerStore;
  const databaseUrl = process.env.BENCH_MEM0_DATABASE_URL;
  if (store === 'pgvector' && !databaseUrl) throw new Error('pgvector: BENCH_MEM0_DATABASE_URL');
  const dir = await mkdtemp(join(tmpdir(), 'mnemo-bench-mem0-'));
  process.env.MEM0_TELEMETRY = 'false';
  process.env.MEM0_DIR = dir;
  // Imported after the environment is set: mem0 reads MEM0_TELEMETRY at module load.
  const Memory = await importMem0();
  const embedder = localEmbedder();
  const memory = new Memory({
    version: 'v1.1',
    embedder: {
      provider: 'langchain',
      config: {
        model: {
          embedQuery: async (text: string) => (await embedder.embed([text], 'query'))[0]!,
          embedDocuments: (texts: string[]) => embedder.embed(texts, 'document'),
        },
      },
    },
    vectorStore:
      store === 'pgvector'
        ? {
            provider: 'pgvector',
            config: {
              connectionString: databaseUrl,
              collectionName: 'bench',
              embeddingModelDims: embedder.dimension,
              hnsw: true,
            },
          }
        : {
            provider: 'memory',
            config: {
              collectionName: 'bench',
              dimension: embedder.dimension,
              dbPath: join(dir, 'vectors.db'),
            },
          },
    historyStore: { provider: 'memory', config: {} },
    // Required by the config schema; never called with infer: false.
    llm: { provider: 'openai', config: { apiKey: 'unused-infer-false', model: 'gpt-4o-mini' } },
  });

  const results: PeerSize[] = [];
  const addLatencies: number[] = [];
  let loaded = 0;
  const qs = questions(seed, searches);
  try {
    for (const size of sizes) {
      // Every memory through mem0's public add(). The regular owners' memories only (no heavy
      // owner): mem0 searches by scanning its SQLite rows, and fewer rows only flatter the peer.
      const items = Array.from({ length: Math.max(0, size - loaded) }, (_, i) =>
        regularMemory(seed, loaded + i),
      );
      loaded = Math.max(loaded, size);
      const latencies: number[] = [];
      const t0 = performance.now();
      for (const item of items) {
        const started = performance.now();
        await memory.add(item.text, { userId: item.ownerId, infer: false });
        latencies.push(performance.now() - started);
      }
      addLatencies.push(...latencies);
      const add = summarise(latencies, (performance.now() - t0) / 1000);
      let found = 0;
      const searchOwner = await runLoad(searches, 1, async (i) => {
        const answer = (await memory.search(qs[i]!, {
          filters: { user_id: ownerName((i * 37) % Math.min(size, REGULAR_OWNERS)) },
          topK: 10,
        })) as { results?: unknown[] };
        found += answer.results?.length ?? 0;
      });
      results.push({
        size,
        memories: loaded,
        add,
        searchOwner,
        resultsPerSearch: found / searches,
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify({ ok: true, store, results }) + '\n');
}

// Exits when done: mem0's pgvector store keeps its PostgreSQL client open, with no way to close it.
main()
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    process.stdout.write(
      JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) }) +
        '\n',
    );
    process.exit(1);
  });

/**
 * Fast loading of the synthetic data set, bypassing HTTP but not the write pipeline's shaping:
 * each memory goes through the server's own canonical hash, assessment (confidence, volatility,
 * expiry, claims, pin), chunking and the real local embedder, and its rows are inserted with the
 * server's Drizzle schema in batches (one transaction per batch). The `tsv` column is generated
 * by PostgreSQL, and HNSW/GIN indexes are maintained on insert as for API writes.
 *
 * What it skips, compared with POST /v1/memories: idempotency records and audit rows (the data
 * set is written once), near/semantic dedupe and claim-conflict supersession (exact duplicates
 * of the same owner are skipped, as the API would answer them `deduped`), and extraction into
 * child memories (the HTTP sample measures that).
 */
import { createHash } from 'node:crypto';
import { assessedColumns } from '../../server/src/services/memory-write/index.js';
import type { Database } from '../../server/src/db/client.js';
import {
  memories,
  memoryChunks,
  type NewMemory,
  type NewMemoryChunk,
} from '../../server/src/db/schema/index.js';
import type { EmbeddingProvider } from '../../server/src/providers/embeddings/index.js';
import { chunkText } from '../../server/src/services/chunking.js';
import { assessMemory } from '../../server/src/services/lifecycle/intelligence.js';
import { canonicalHash } from '../../server/src/text/canonical.js';
import type { SyntheticMemory } from './generator.js';

const BATCH = 500;

export interface BulkLoader {
  /** Inserts the given memories; returns how many were stored (exact duplicates skipped). */
  load(items: Iterable<SyntheticMemory>): Promise<number>;
  stored: number;
  skipped: number;
}

/**
 * A UUID derived from `key` (a hash, version 4 layout): two databases loaded with the same data
 * and the same `ids` option hold the same ids, so tie-breaks by id (keyword ranking orders equal
 * ranks by chunk id) agree between them.
 */
function derivedUuid(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface BulkLoaderOptions {
  /** Derive memory and chunk ids from this, the owner and the text instead of random ones. */
  ids?: string;
}

export function bulkLoader(
  embeddings: EmbeddingProvider,
  workspaceId: string,
  options: BulkLoaderOptions = {},
): BulkLoader & { attach(db: Database): void } {
  // Survives reopening the database between sizes (PGlite is loaded with the server stopped).
  const seen = new Set<string>();
  let db: Database | undefined;
  const state = {
    stored: 0,
    skipped: 0,
    attach(next: Database) {
      db = next;
    },
    async load(items: Iterable<SyntheticMemory>): Promise<number> {
      if (!db) throw new Error('bulk loader has no database');
      let batch: SyntheticMemory[] = [];
      let stored = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        stored += await insertBatch(db!, embeddings, workspaceId, batch, options.ids);
        batch = [];
      };
      for (const item of items) {
        const key = `${item.ownerId}|${canonicalHash(item.text)}`;
        if (seen.has(key)) {
          state.skipped += 1;
          continue;
        }
        seen.add(key);
        batch.push(item);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
      state.stored += stored;
      return stored;
    },
  };
  return state;
}

async function insertBatch(
  db: Database,
  embeddings: EmbeddingProvider,
  workspaceId: string,
  batch: SyntheticMemory[],
  ids: string | undefined,
): Promise<number> {
  const now = new Date();
  const memoryRows: Array<NewMemory & { id: string }> = [];
  const chunkTexts: string[] = [];
  const chunkOwners: Array<{
    id?: string;
    memoryId: string;
    ownerId: string;
    chunkIndex: number;
  }> = [];
  for (const item of batch) {
    const id =
      ids === undefined
        ? crypto.randomUUID()
        : derivedUuid(`${ids}|${item.ownerId}|${canonicalHash(item.text)}`);
    const assessment = assessMemory(
      {
        text: item.text,
        memoryType: item.memoryType,
        importance: 1,
        metadata: {},
        effectiveAt: null,
      },
      now,
    );
    memoryRows.push({
      id,
      workspaceId,
      ownerId: item.ownerId,
      ownerType: 'user',
      scope: null,
      namespace: null,
      containerTag: null,
      text: item.text,
      metadata: {},
      memoryType: item.memoryType,
      importance: 1,
      chunkProfile: 'balanced',
      effectiveAt: null,
      contentHash: canonicalHash(item.text),
      idempotencyKey: null,
      ...assessedColumns(assessment),
    });
    chunkText(item.text, 'balanced').forEach((text, chunkIndex) => {
      chunkTexts.push(text);
      chunkOwners.push({
        ...(ids === undefined ? {} : { id: derivedUuid(`${id}|${chunkIndex}`) }),
        memoryId: id,
        ownerId: item.ownerId,
        chunkIndex,
      });
    });
  }
  const vectors = await embeddings.embed(chunkTexts, 'document');
  const chunkRows: NewMemoryChunk[] = chunkTexts.map((text, i) => ({
    ...chunkOwners[i]!,
    workspaceId,
    ownerType: 'user',
    text,
    embedding: vectors[i] ?? null,
    embeddingProvider: embeddings.provider,
    embeddingDimension: embeddings.dimension,
    embeddingVersion: embeddings.version,
  }));
  await db.transaction(async (tx) => {
    await tx.insert(memories).values(memoryRows);
    await tx.insert(memoryChunks).values(chunkRows);
  });
  return memoryRows.length;
}

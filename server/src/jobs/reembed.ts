import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from '../db/client.js';
import { chunksOfOtherVersions, setChunkEmbeddings } from '../db/queries/embeddings.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';

export interface ReembedOptions {
  /** Chunks per transaction: on PGlite each holds the one connection that long. */
  batchSize?: number;
  /** Checked between batches: a shutdown stops the job after the batch in progress. */
  stopped?: () => boolean;
}

/**
 * Embeds again, with `embeddings`, every chunk its provider embedded under another version: after
 * the local embedder changed (mnemo-local-v2 → v3, another word-vector table, or back to v2 when
 * the table is missing). Vector search and dedupe compare only chunks of the query's dimension,
 * so until then older memories are found by keywords alone. Only an in-process embedder does
 * this on its own (no network, no per-call cost: about 0.1 ms a chunk); a remote model's chunks
 * are left as they are. Returns how many chunks changed.
 */
export async function reembedChunks(
  db: Database,
  embeddings: EmbeddingProvider,
  { batchSize = 100, stopped = () => false }: ReembedOptions = {},
): Promise<number> {
  if (!embeddings.inProcess) return 0;
  const stamp = {
    provider: embeddings.provider,
    dimension: embeddings.dimension,
    version: embeddings.version,
  };
  let changed = 0;
  let after: string | undefined;
  while (!stopped()) {
    const chunks = await chunksOfOtherVersions(db, stamp, after, batchSize);
    if (chunks.length === 0) break;
    const vectors = await embeddings.embed(
      chunks.map((chunk) => chunk.text),
      'document',
    );
    changed += await setChunkEmbeddings(
      db,
      chunks.map((chunk, i) => ({ id: chunk.id, embedding: vectors[i]! })),
      stamp,
    );
    after = chunks[chunks.length - 1]!.id;
    // Embedding a batch is CPU work on the event loop: requests waiting on it go first.
    await nextTurn();
  }
  return changed;
}

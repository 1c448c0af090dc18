import type { Reader, Writer } from '../client.js';
import { and, asc, eq, gt, isNotNull, ne, sql } from 'drizzle-orm';
import { memoryChunks } from '../schema/index.js';

export interface ChunkToEmbed {
  id: string;
  text: string;
}

export interface EmbedderStamp {
  provider: string;
  dimension: number;
  version: string;
}

/**
 * Chunks embedded by `provider` under another version than `version` (every workspace), in id
 * order after `after`: what a changed embedder of the same provider has to embed again.
 */
export async function chunksOfOtherVersions(
  db: Reader,
  { provider, version }: Pick<EmbedderStamp, 'provider' | 'version'>,
  after: string | undefined,
  limit: number,
): Promise<ChunkToEmbed[]> {
  return db
    .select({ id: memoryChunks.id, text: memoryChunks.text })
    .from(memoryChunks)
    .where(
      and(
        eq(memoryChunks.embeddingProvider, provider),
        isNotNull(memoryChunks.embeddingVersion),
        ne(memoryChunks.embeddingVersion, version),
        after === undefined ? undefined : gt(memoryChunks.id, after),
      ),
    )
    .orderBy(asc(memoryChunks.id))
    .limit(limit);
}

/**
 * Stores new embeddings of chunks, in one transaction. A chunk already at `stamp.version` (a
 * concurrent write or another instance got there first) is left alone. Returns how many changed.
 */
export async function setChunkEmbeddings(
  db: Writer,
  chunks: Array<{ id: string; embedding: number[] }>,
  stamp: EmbedderStamp,
): Promise<number> {
  return db.transaction(async (tx) => {
    let changed = 0;
    for (const chunk of chunks) {
      const rows = await tx
        .update(memoryChunks)
        .set({
          embedding: chunk.embedding,
          embeddingProvider: stamp.provider,
          embeddingDimension: stamp.dimension,
          embeddingVersion: stamp.version,
        })
        .where(
          and(
            eq(memoryChunks.id, chunk.id),
            sql`${memoryChunks.embeddingVersion} is distinct from ${stamp.version}`,
          ),
        )
        .returning({ id: memoryChunks.id });
      changed += rows.length;
    }
    return changed;
  });
}

import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, halfvec, tsvector } from './columns.js';
import { memories } from './memories.js';
import { workspaces } from './workspaces.js';

/**
 * Embedding dimensions that get their own partial HNSW index. The `embedding` column is untyped
 * so providers of any dimension can be stored; vector search must filter on
 * `embedding_dimension = N` and compare `embedding::halfvec(N)` for the index to be used.
 * Other dimensions still work, by sequential scan.
 */
export const INDEXED_EMBEDDING_DIMENSIONS = [256, 384, 768, 1024, 1536] as const;
export type IndexedEmbeddingDimension = (typeof INDEXED_EMBEDDING_DIMENSIONS)[number];

/** Name of the partial HNSW index serving `dimension`. */
export function embeddingIndexName(dimension: number): string {
  return `memory_chunks_embedding_${dimension}_hnsw`;
}

export const memoryChunks = pgTable(
  'memory_chunks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    memoryId: uuid('memory_id')
      .notNull()
      .references(() => memories.id, { onDelete: 'cascade' }),
    /** Denormalised from the memory so tenant-scoped recall never needs a join to filter. */
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    ownerId: text('owner_id').notNull(),
    ownerType: text('owner_type').notNull(),
    chunkIndex: integer('chunk_index').notNull(),
    text: text('text').notNull(),
    /**
     * The turn this chunk answers: the text of the memory its owner wrote just before, in the same
     * episode (first chunk only; null when there is none). Keyword search finds a reply through
     * the question it answers, at a lower weight than its own words; it is never returned.
     */
    contextText: text('context_text'),
    embedding: halfvec('embedding'),
    embeddingProvider: text('embedding_provider'),
    embeddingDimension: integer('embedding_dimension'),
    embeddingVersion: text('embedding_version'),
    // Own words weighted A, the context's D: keyword recall tells them apart (db/queries/recall.ts).
    tsv: tsvector('tsv').generatedAlwaysAs(
      sql`setweight(to_tsvector('english', "text"), 'A') || setweight(to_tsvector('english', coalesce("context_text", '')), 'D')`,
    ),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('memory_chunks_memory_chunk_index_unique').on(t.memoryId, t.chunkIndex),
    index('memory_chunks_workspace_owner_idx').on(t.workspaceId, t.ownerType, t.ownerId),
    // The owner beside the words (btree_gin): a keyword search reads only its owner's matching
    // chunks, not every owner's chunk that holds a query word.
    index('memory_chunks_keyword_owner_gin').using('gin', t.ownerId, t.tsv),
    ...INDEXED_EMBEDDING_DIMENSIONS.map((n) =>
      index(embeddingIndexName(n))
        .using('hnsw', sql.raw(`("embedding"::halfvec(${n})) halfvec_cosine_ops`))
        .where(sql.raw(`"embedding_dimension" = ${n}`)),
    ),
  ],
);

export type MemoryChunk = typeof memoryChunks.$inferSelect;
export type NewMemoryChunk = typeof memoryChunks.$inferInsert;

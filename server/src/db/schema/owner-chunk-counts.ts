import { bigint, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { workspaces } from './workspaces.js';

/**
 * How many chunks each owner has (in any state): keyword recall's collection size, read by every
 * keyword and hybrid search. Counting an owner's chunks by index costs in proportion to the owner
 * (tens of thousands of index entries for a large one); this row costs one lookup. Kept exact by
 * statement triggers on `memory_chunks` inserts and deletes (migration 0019), so every path that
 * writes chunks counts, with no code of its own. Owners never written have no row (count 0).
 */
export const ownerChunkCounts = pgTable(
  'owner_chunk_counts',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    ownerType: text('owner_type').notNull(),
    ownerId: text('owner_id').notNull(),
    chunks: bigint('chunks', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.ownerType, t.ownerId] })],
);

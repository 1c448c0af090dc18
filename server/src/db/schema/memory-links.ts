import { index, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { memories } from './memories.js';
import { workspaces } from './workspaces.js';

export const memoryLinks = pgTable(
  'memory_links',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    sourceMemoryId: uuid('source_memory_id')
      .notNull()
      .references(() => memories.id, { onDelete: 'cascade' }),
    targetMemoryId: uuid('target_memory_id')
      .notNull()
      .references(() => memories.id, { onDelete: 'cascade' }),
    relation: text('relation').notNull().default('related'),
    createdAt: createdAt(),
  },
  (t) => [
    unique('memory_links_edge_unique').on(
      t.workspaceId,
      t.sourceMemoryId,
      t.targetMemoryId,
      t.relation,
    ),
    // The unique constraint already serves lookups by source; deletes of a target need their own.
    index('memory_links_target_memory_id_idx').on(t.targetMemoryId),
  ],
);

export type MemoryLink = typeof memoryLinks.$inferSelect;
export type NewMemoryLink = typeof memoryLinks.$inferInsert;

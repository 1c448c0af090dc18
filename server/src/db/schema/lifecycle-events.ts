import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { memories } from './memories.js';
import { workspaces } from './workspaces.js';

/**
 * Why a memory's lifecycle changed: every supersession, merge, expiry and hygiene decision, with
 * the rule that made it and the other memory involved. Shown on the memory object.
 */
export const memoryLifecycleEvents = pgTable(
  'memory_lifecycle_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    memoryId: uuid('memory_id')
      .notNull()
      .references(() => memories.id, { onDelete: 'cascade' }),
    /** replaced, merged, archived, extracted, ... */
    event: text('event').notNull(),
    /** The rule that decided it: replaces_memory_id, conflict, correction, evolution, expiry, hygiene_duplicate, ... */
    rule: text('rule').notNull(),
    relatedMemoryId: uuid('related_memory_id'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [index('memory_lifecycle_events_memory_idx').on(t.memoryId, t.createdAt)],
);

export type MemoryLifecycleEvent = typeof memoryLifecycleEvents.$inferSelect;
export type NewMemoryLifecycleEvent = typeof memoryLifecycleEvents.$inferInsert;

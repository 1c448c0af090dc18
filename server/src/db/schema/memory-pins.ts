import { index, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { memories } from './memories.js';
import { workspaces } from './workspaces.js';

/**
 * Profile pins (PATCH /v1/profile/pins): memories an owner always wants in context, before the
 * ranked ones. A pin goes with its memory (cascade), so deleting a memory drops its pins.
 */
export const memoryPins = pgTable(
  'memory_pins',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    ownerId: text('owner_id').notNull(),
    ownerType: text('owner_type').notNull(),
    memoryId: uuid('memory_id')
      .notNull()
      .references(() => memories.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [
    // Also serves "this owner's pins" (its prefix).
    unique('memory_pins_owner_memory_unique').on(t.workspaceId, t.ownerType, t.ownerId, t.memoryId),
    // The cascade from a deleted memory looks pins up by memory.
    index('memory_pins_memory_id_idx').on(t.memoryId),
  ],
);

export type MemoryPin = typeof memoryPins.$inferSelect;

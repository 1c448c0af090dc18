import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/** Search history, stored when a search carries `x-save-history: 1` (no trace snapshot). */
export const savedSearches = pgTable(
  'saved_searches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    requestId: text('request_id').notNull(),
    ownerId: text('owner_id').notNull(),
    ownerType: text('owner_type').notNull(),
    query: text('query').notNull(),
    /** The search payload as sent, to replay it. */
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('saved_searches_workspace_created_idx').on(t.workspaceId, t.createdAt)],
);

export type SavedSearch = typeof savedSearches.$inferSelect;

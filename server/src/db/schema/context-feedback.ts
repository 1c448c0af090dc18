import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/**
 * POST /v1/context/feedback: one row per feedback on a context response, named by the
 * x-request-id of the context call. Memory ids are kept as given (no foreign key): the row is a
 * record of what the caller said, and outlives the memories it names.
 */
export const contextFeedback = pgTable(
  'context_feedback',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    requestId: text('request_id').notNull(),
    /** `positive` or `negative`; null when the caller sent only memory ids or a comment. */
    rating: text('rating'),
    helpfulMemoryIds: jsonb('helpful_memory_ids').$type<string[]>().notNull().default([]),
    unhelpfulMemoryIds: jsonb('unhelpful_memory_ids').$type<string[]>().notNull().default([]),
    comment: text('comment'),
    createdAt: createdAt(),
  },
  (t) => [index('context_feedback_workspace_request_idx').on(t.workspaceId, t.requestId)],
);

export type ContextFeedback = typeof contextFeedback.$inferSelect;

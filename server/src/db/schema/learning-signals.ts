import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

export interface ReturnedResult {
  memoryId: string;
  chunkId: string;
  /** 1-based position in the response. */
  rank: number;
  score: number;
}

/**
 * Implicit learning signal: what one search or context call returned, keyed by its
 * x-request-id. Explicit feedback for that request id lands on the latest record.
 */
export const learningSignals = pgTable(
  'learning_signals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    requestId: text('request_id').notNull(),
    route: text('route').notNull(),
    ownerId: text('owner_id').notNull(),
    ownerType: text('owner_type').notNull(),
    query: text('query').notNull(),
    results: jsonb('results').$type<ReturnedResult[]>().notNull(),
    feedback: text('feedback'),
    feedbackAt: timestamp('feedback_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    index('learning_signals_workspace_request_idx').on(t.workspaceId, t.requestId, t.createdAt),
  ],
);

export type LearningSignal = typeof learningSignals.$inferSelect;
export type NewLearningSignal = typeof learningSignals.$inferInsert;

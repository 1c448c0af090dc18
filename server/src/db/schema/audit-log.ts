import { index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { apiKeys } from './api-keys.js';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/** One row per HTTP request; rows outlive the workspace or key they mention. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    requestId: text('request_id').notNull(),
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'set null' }),
    apiKeyId: uuid('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    method: text('method').notNull(),
    path: text('path').notNull(),
    /** The contract's route pattern (`/v1/memories/:id`); null when no route matched (404). */
    route: text('route'),
    status: integer('status').notNull(),
    durationMs: integer('duration_ms').notNull(),
    ip: text('ip'),
    userAgent: text('user_agent'),
    createdAt: createdAt(),
  },
  (t) => [
    index('audit_log_workspace_created_idx').on(t.workspaceId, t.createdAt),
    index('audit_log_request_id_idx').on(t.requestId),
  ],
);

export type AuditRecord = typeof auditLog.$inferSelect;
export type NewAuditRecord = typeof auditLog.$inferInsert;

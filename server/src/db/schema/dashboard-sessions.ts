import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/**
 * A signed-in browser. The cookie carries a random session secret; only its SHA-256 is stored,
 * so a read of this table does not yield usable cookies. Same for the CSRF token.
 */
export const dashboardSessions = pgTable(
  'dashboard_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull().unique('dashboard_sessions_token_hash_unique'),
    csrfHash: text('csrf_hash').notNull(),
    /** The identity provider's subject (JWT `sub`). */
    userId: text('user_id').notNull(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('dashboard_sessions_expires_idx').on(t.expiresAt)],
);

export type DashboardSession = typeof dashboardSessions.$inferSelect;

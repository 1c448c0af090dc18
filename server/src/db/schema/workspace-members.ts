import { index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/**
 * Who may use a workspace from the dashboard: the identity provider's user (the JWT `sub`) and
 * a role. The creator of a workspace is its `owner`.
 */
export const workspaceMembers = pgTable(
  'workspace_members',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    role: text('role').$type<'owner' | 'admin' | 'member'>().notNull().default('owner'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.userId] }),
    index('workspace_members_user_idx').on(t.userId, t.createdAt),
  ],
);

export type WorkspaceMember = typeof workspaceMembers.$inferSelect;

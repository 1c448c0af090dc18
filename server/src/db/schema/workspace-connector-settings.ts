import { jsonb, pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';
import { workspaces } from './workspaces.js';

/**
 * One row per workspace that has changed its connector settings (no row: the defaults). The
 * settings are validated by the contract's `ConnectorSettings` schema before they are stored.
 */
export const workspaceConnectorSettings = pgTable('workspace_connector_settings', {
  workspaceId: uuid('workspace_id')
    .primaryKey()
    .references(() => workspaces.id, { onDelete: 'cascade' }),
  settings: jsonb('settings').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export type WorkspaceConnectorSettingsRow = typeof workspaceConnectorSettings.$inferSelect;

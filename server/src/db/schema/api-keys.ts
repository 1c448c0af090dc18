import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** The first characters of the plaintext key, so a user can recognise it in a list. */
    keyPrefix: text('key_prefix').notNull(),
    /** Salted hash of the key; the plaintext is shown once and never stored. */
    keyHash: text('key_hash').notNull().unique('api_keys_key_hash_unique'),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    /**
     * Until then the key gets the introductory rate (15 requests per minute): keys minted by the
     * operator key route start there for 48 hours. Null: the normal per-key rate.
     */
    introductoryUntil: timestamp('introductory_until', { withTimezone: true }),
    /**
     * `tenant`: the workspace's routes. `admin`: those, plus POST /v1/workspaces (creating new
     * workspaces). Minted only through the admin-token key route.
     */
    scope: text('scope', { enum: ['tenant', 'admin'] })
      .notNull()
      .default('tenant'),
  },
  (t) => [index('api_keys_workspace_id_idx').on(t.workspaceId)],
);

export type ApiKey = typeof apiKeys.$inferSelect;
export type NewApiKey = typeof apiKeys.$inferInsert;

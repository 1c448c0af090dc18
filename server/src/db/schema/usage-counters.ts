import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  date,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { workspaces } from './workspaces.js';

/**
 * One metered resource of a workspace in one window: a UTC `day`, a billing `period` (keyed by
 * its start date) or `total` (storage, keyed by a fixed date). `used` is committed consumption;
 * `reserved` is held by reservations in flight. A reservation checks `used + reserved + amount
 * <= cap` with the rows locked, so two requests racing for the last unit never both pass.
 */
export const usageCounters = pgTable(
  'usage_counters',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    windowKind: text('window_kind').$type<'day' | 'period' | 'total'>().notNull(),
    windowStart: date('window_start', { mode: 'string' }).notNull(),
    /** A UsageResource of the contract: writes, reads, embeds, embed_tokens, ... */
    resource: text('resource').notNull(),
    used: bigint('used', { mode: 'number' }).notNull().default(0),
    reserved: bigint('reserved', { mode: 'number' }).notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.windowKind, t.windowStart, t.resource] }),
    check('usage_counters_window_kind_check', sql`${t.windowKind} in ('day', 'period', 'total')`),
    check('usage_counters_amounts_check', sql`${t.used} >= 0 and ${t.reserved} >= 0`),
  ],
);

export type UsageCounter = typeof usageCounters.$inferSelect;
export type NewUsageCounter = typeof usageCounters.$inferInsert;

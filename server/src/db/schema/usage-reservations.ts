import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/** One counter a reservation holds an amount on. */
export interface ReservedAmount {
  resource: string;
  window_kind: 'day' | 'period' | 'total';
  /** `YYYY-MM-DD`: the window's key in usage_counters. */
  window_start: string;
  amount: number;
}

/**
 * `reserved` until settled; `expired` once reconciliation refunded it. Settling (commit or
 * release) deletes the row in the same statement: committed and released are outcomes, not
 * stored states, so a request costs no second index write and there is nothing to purge. An
 * expired reservation stays a day, so that a request that finishes late still counts.
 */
export const RESERVATION_STATES = ['reserved', 'expired'] as const;
export type ReservationState = (typeof RESERVATION_STATES)[number];

/**
 * What a request reserved before its costly work, so that it can be settled afterwards (commit:
 * reserved → used; release: refunded) and, when its process died first, refunded once
 * `expires_at` has passed. `amounts` names each counter row and window the request holds, in
 * the order counters are locked.
 */
export const usageReservations = pgTable(
  'usage_reservations',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    amounts: jsonb('amounts').$type<ReservedAmount[]>().notNull(),
    state: text('state').$type<ReservationState>().notNull().default('reserved'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: createdAt(),
    /** When reconciliation expired it; expired rows are deleted a day later. */
    expiredAt: timestamp('expired_at', { withTimezone: true }),
  },
  (t) => [
    check('usage_reservations_state_check', sql`${t.state} in ('reserved', 'expired')`),
    // Reconciliation looks only for open reservations past their expiry.
    index('usage_reservations_open_expiry_idx')
      .on(t.expiresAt)
      .where(sql`${t.state} = 'reserved'`),
  ],
);

export type UsageReservationRow = typeof usageReservations.$inferSelect;
export type NewUsageReservationRow = typeof usageReservations.$inferInsert;

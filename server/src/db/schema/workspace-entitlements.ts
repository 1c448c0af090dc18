import { sql } from 'drizzle-orm';
import { check, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/** `active`; `past_due` (payment failed: grace until `grace_until`); `canceled`. */
export const ENTITLEMENT_STATUSES = ['active', 'past_due', 'canceled'] as const;
export type EntitlementStatus = (typeof ENTITLEMENT_STATUSES)[number];

/**
 * What a workspace is entitled to: its plan for the current period. Written by billing (the
 * payment callback) or, on an install without billing, granted internally on first use. The
 * source of truth of quotas; `workspaces.plan` is not read.
 */
export const workspaceEntitlements = pgTable(
  'workspace_entitlements',
  {
    workspaceId: uuid('workspace_id')
      .primaryKey()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    /** A plan code of the contract's PLANS. */
    plan: text('plan').notNull(),
    status: text('status').$type<EntitlementStatus>().notNull().default('active'),
    periodStart: timestamp('period_start', { withTimezone: true }).notNull(),
    /** Billing: the paid period's end. Internal grants roll on to the next period by themselves. */
    periodEnd: timestamp('period_end', { withTimezone: true }).notNull(),
    entitlementSource: text('entitlement_source').$type<'billing' | 'internal_grant'>().notNull(),
    /** Until then a lapsed entitlement keeps its plan with daily limits floored to launch's. */
    graceUntil: timestamp('grace_until', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check(
      'workspace_entitlements_status_check',
      sql`${t.status} in ('active', 'past_due', 'canceled')`,
    ),
    check(
      'workspace_entitlements_source_check',
      sql`${t.entitlementSource} in ('billing', 'internal_grant')`,
    ),
    check('workspace_entitlements_period_check', sql`${t.periodEnd} > ${t.periodStart}`),
  ],
);

export type WorkspaceEntitlement = typeof workspaceEntitlements.$inferSelect;
export type NewWorkspaceEntitlement = typeof workspaceEntitlements.$inferInsert;

import { boolean, pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';
import { workspaces } from './workspaces.js';

/**
 * Billing settings of a workspace that are not part of its entitlement. `cancel_at_period_end`
 * is set by an operator (POST /admin/billing/cancel-at-period-end) and cleared by the next
 * successful payment; while set, the paid plan ends at its period end without grace.
 */
export const billingAccounts = pgTable('billing_accounts', {
  workspaceId: uuid('workspace_id')
    .primaryKey()
    .references(() => workspaces.id, { onDelete: 'cascade' }),
  cancelAtPeriodEnd: boolean('cancel_at_period_end').notNull().default(false),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export type BillingAccount = typeof billingAccounts.$inferSelect;

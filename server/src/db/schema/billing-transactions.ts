import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/**
 * `created` at checkout; `paid` once a verified callback applied it; `failed` when the provider
 * reported the payment failed; `rejected` when a callback for it did not match (amount, plan,
 * workspace) or the provider's record disagreed.
 */
export const BILLING_TRANSACTION_STATES = ['created', 'paid', 'failed', 'rejected'] as const;
export type BillingTransactionState = (typeof BILLING_TRANSACTION_STATES)[number];

/**
 * One checkout: what the workspace was asked to pay, for which plan. The amount is the server's
 * plan price at checkout time (never the client's); a callback must match it.
 */
export const billingTransactions = pgTable(
  'billing_transactions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    /** Our transaction id, sent to the provider (PayU `txnid`); unique per provider. */
    txnid: text('txnid').notNull(),
    /** A plan code of the contract's PLANS. */
    plan: text('plan').notNull(),
    /** Decimal string with two places, as sent to the provider (`399.00`). */
    amount: text('amount').notNull(),
    currency: text('currency').notNull().default('INR'),
    state: text('state').$type<BillingTransactionState>().notNull().default('created'),
    /** The provider's payment id once known (PayU `mihpayid`). */
    providerPaymentId: text('provider_payment_id'),
    paidAt: timestamp('paid_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('billing_transactions_provider_txnid_idx').on(t.provider, t.txnid),
    index('billing_transactions_workspace_idx').on(t.workspaceId, t.createdAt),
    check(
      'billing_transactions_state_check',
      sql`${t.state} in ('created', 'paid', 'failed', 'rejected')`,
    ),
  ],
);

export type BillingTransaction = typeof billingTransactions.$inferSelect;
export type NewBillingTransaction = typeof billingTransactions.$inferInsert;

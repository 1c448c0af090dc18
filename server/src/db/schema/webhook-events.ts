import { sql } from 'drizzle-orm';
import {
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/**
 * - `deferred`: waiting for the provider's verification (every event starts here, so one whose
 *   process died mid-way is picked up by reprocessing); retried at `next_attempt_at`.
 * - `processed`: verified and applied (a failed payment: recorded); final.
 * - `rejected`: did not match its transaction or the provider's record; final, nothing applied.
 */
export const WEBHOOK_EVENT_STATES = ['deferred', 'processed', 'rejected'] as const;
export type WebhookEventState = (typeof WEBHOOK_EVENT_STATES)[number];

/**
 * Every payment callback whose signature was valid. `event_key` (PayU: txnid, status and
 * mihpayid) makes processing idempotent: a replayed or duplicated callback finds its row.
 * Callbacks with a bad signature are not stored (anyone can send them).
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    provider: text('provider').notNull(),
    eventKey: text('event_key').notNull(),
    txnid: text('txnid').notNull(),
    /** The provider's payment status in the callback (`success`, `failure`, ...). */
    paymentStatus: text('payment_status').notNull(),
    /** The transaction's workspace, once the callback was matched to one. */
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
    /** The callback's fields without its signature; the provider sends no secret. */
    fields: jsonb('fields').$type<Record<string, string>>().notNull(),
    state: text('state').$type<WebhookEventState>().notNull().default('deferred'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    /** Why it was deferred or rejected. */
    error: text('error'),
    /** When the provider's verification API last answered for it. */
    verifiedAt: timestamp('verified_at', { withTimezone: true }),
    processedAt: timestamp('processed_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('webhook_events_provider_key_idx').on(t.provider, t.eventKey),
    index('webhook_events_deferred_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.state} = 'deferred'`),
    index('webhook_events_workspace_idx').on(t.workspaceId),
    check('webhook_events_state_check', sql`${t.state} in ('deferred', 'processed', 'rejected')`),
  ],
);

export type WebhookEvent = typeof webhookEvents.$inferSelect;
export type NewWebhookEvent = typeof webhookEvents.$inferInsert;

import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/**
 * A workspace's webhook endpoint (docs/webhooks.md). The signing secret must be usable to sign,
 * so it is stored encrypted (AES-256-GCM under the server's webhook key), never hashed.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description').notNull().default(''),
    /** The public event types it receives; empty: every type. */
    eventTypes: text('event_types')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    enabled: boolean('enabled').notNull().default(true),
    secretCiphertext: text('secret_ciphertext').notNull(),
    /** The secret before the last rotation: it also signs until `previous_secret_expires_at`. */
    previousSecretCiphertext: text('previous_secret_ciphertext'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true }),
    /**
     * Every outbox event of the workspace with `seq` at or below it has been fanned out to this
     * endpoint (or predates it); the dispatcher looks above it only.
     */
    seqFloor: bigint('seq_floor', { mode: 'number' }).notNull().default(0),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_workspace_idx').on(t.workspaceId, t.createdAt)],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

export const WEBHOOK_DELIVERY_STATES = ['pending', 'sending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number];

/**
 * One outbox event to one endpoint: the delivery queue and its log. `pending` rows are due at
 * `next_attempt_at`; a `sending` row holds its claim until `next_attempt_at`, after which another
 * instance may take it again (its sender died). Unique per (endpoint, event): fanning out twice
 * adds nothing.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    // No foreign key of its own: rows go with their endpoint, which goes with its workspace.
    workspaceId: uuid('workspace_id').notNull(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    /** The outbox event (`domain_events.id`): the `webhook-id` receivers dedupe on. */
    eventId: uuid('event_id').notNull(),
    /** The event's outbox `seq`: a memory's deliveries go out in this order. */
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    eventType: text('event_type').notNull(),
    memoryId: uuid('memory_id'),
    /** The body as signed and sent (built once, so every attempt and replay sends the same). */
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    status: text('status').$type<WebhookDeliveryState>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    responseStatus: integer('response_status'),
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [
    unique('webhook_deliveries_endpoint_event_unique').on(t.endpointId, t.eventId),
    // The dispatcher's claim: open deliveries by due time.
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.status} in ('pending', 'sending')`),
    // "An earlier open delivery of the same memory to the same endpoint" (ordering).
    index('webhook_deliveries_open_memory_idx')
      .on(t.endpointId, t.memoryId, t.eventSeq)
      .where(sql`${t.status} in ('pending', 'sending')`),
    // The delivery log, newest first.
    index('webhook_deliveries_log_idx').on(t.endpointId, t.createdAt),
    check(
      'webhook_deliveries_status_check',
      sql`${t.status} in ('pending', 'sending', 'succeeded', 'failed')`,
    ),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

import { sql } from 'drizzle-orm';
import { bigint, check, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

/**
 * What can happen to a memory (`replaced` is a supersession; `archived` covers expiry and
 * retention, told apart by the rule). `feedback` is a vote on a search or context call. `erased`
 * is an owner's erasure (no memory; its details are the receipt, without the owner's content).
 */
export const DOMAIN_EVENT_KINDS = [
  'created',
  'extracted',
  'deduped',
  'replaced',
  'merged',
  'archived',
  'deleted',
  'feedback',
  'erased',
] as const;
export type DomainEventKind = (typeof DOMAIN_EVENT_KINDS)[number];

/**
 * The outbox: every change to a workspace's memories, written in the same transaction as the
 * change. The memory object's lifecycle history reads from it, and `seq` orders it for anyone
 * delivering it onwards (webhooks). `memory_id` has no foreign key, so a deleted memory's events
 * (its `deleted` one above all) outlive it.
 */
export const domainEvents = pgTable(
  'domain_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Commit-independent order of insertion: a delivery cursor compares it. */
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<DomainEventKind>().notNull(),
    /** Null for events about no single memory (`feedback`). */
    memoryId: uuid('memory_id'),
    /** The rule that decided it: conflict, correction, evolution, expiry, retention, request, ... */
    rule: text('rule').notNull(),
    relatedMemoryId: uuid('related_memory_id'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [
    index('domain_events_memory_idx').on(t.memoryId, t.createdAt),
    index('domain_events_workspace_seq_idx').on(t.workspaceId, t.seq),
    check(
      'domain_events_kind_check',
      sql.raw(`"kind" in (${DOMAIN_EVENT_KINDS.map((kind) => `'${kind}'`).join(', ')})`),
    ),
  ],
);

export type DomainEventRow = typeof domainEvents.$inferSelect;
export type NewDomainEventRow = typeof domainEvents.$inferInsert;

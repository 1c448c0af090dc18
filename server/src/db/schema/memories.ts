import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  boolean,
  index,
  jsonb,
  pgTable,
  real,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { workspaces } from './workspaces.js';

export type MemoryMetadata = Record<string, string | number | boolean | null>;

export interface MemoryClaim {
  subject: string;
  attribute: string;
  value: string;
}

export const memories = pgTable(
  'memories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    ownerId: text('owner_id').notNull(),
    ownerType: text('owner_type').notNull().default('user'),
    scope: text('scope'),
    namespace: text('namespace'),
    containerTag: text('container_tag'),
    text: text('text').notNull(),
    metadata: jsonb('metadata').$type<MemoryMetadata>().notNull().default({}),
    memoryType: text('memory_type').notNull().default('note'),
    // The contract's DEFAULT_IMPORTANCE, which every write passes; drizzle-kit reads this file
    // without the workspace packages, so the column default repeats it for raw inserts.
    importance: real('importance').notNull().default(1),
    chunkProfile: text('chunk_profile').notNull().default('balanced'),
    lifecycleState: text('lifecycle_state').notNull().default('active'),
    /**
     * The lifecycle rule that archived the memory (`expiry`: hygiene, `retention`: the plan's
     * retention); null while it is not archived. Searches recall `expiry` archives as history,
     * and tell them apart by this column rather than by the lifecycle events (recall.ts).
     */
    archiveRule: text('archive_rule'),
    confidence: real('confidence'),
    volatility: real('volatility'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    effectiveAt: timestamp('effective_at', { withTimezone: true }),
    contentHash: text('content_hash').notNull(),
    /**
     * Explicit feedback, +1 per positive and -1 per negative vote weighted by the memory's rank
     * in the voted result, clamped to ±3 so no single vote (or pile of votes) buries a memory.
     */
    feedbackScore: real('feedback_score').notNull().default(0),
    /** Single-valued facts the text states (subject + attribute = value), for conflict resolution. */
    claims: jsonb('claims').$type<MemoryClaim[]>().notNull().default([]),
    /** `subject|attribute` of each claim, GIN-indexed: "which live memories state this?" */
    claimKeys: text('claim_keys')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** `pin` memories and very important ones: ranked as pins, never expire. */
    pinned: boolean('pinned').notNull().default(false),
    /** How much the source is trusted (1 stated by the user; less for extracted or inferred text). */
    sourceWeight: real('source_weight').notNull().default(1),
    priorityScore: real('priority_score'),
    idempotencyKey: text('idempotency_key'),
    /** Set on child memories produced by extraction; they go when their parent goes. */
    parentMemoryId: uuid('parent_memory_id').references((): AnyPgColumn => memories.id, {
      onDelete: 'cascade',
    }),
    replacedByMemoryId: uuid('replaced_by_memory_id').references((): AnyPgColumn => memories.id, {
      onDelete: 'set null',
    }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // (created_at, id) is the order of lists and of episodes: with id in the key, "the memory
    // written just before this one" is one index step even where many share a created_at (one
    // transaction's memories do).
    index('memories_workspace_owner_created_id_idx').on(
      t.workspaceId,
      t.ownerType,
      t.ownerId,
      t.createdAt,
      t.id,
    ),
    index('memories_workspace_content_hash_idx').on(t.workspaceId, t.contentHash),
    uniqueIndex('memories_workspace_idempotency_key_unique')
      .on(t.workspaceId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} IS NOT NULL`),
    index('memories_expires_at_idx')
      .on(t.expiresAt)
      .where(sql`${t.expiresAt} IS NOT NULL`),
    index('memories_parent_memory_id_idx').on(t.parentMemoryId),
    index('memories_claim_keys_gin').using('gin', t.claimKeys),
  ],
);

/**
 * The time a memory is about: when what it says held (`effective_at`, e.g. the date of an
 * imported conversation), else when it was written: what time filters (`start_time` /
 * `end_time`) read, and the order episodes follow (episodes.ts, on its own aliases).
 */
export const memoryTime = sql`coalesce(${memories.effectiveAt}, ${memories.createdAt})`;

export type Memory = typeof memories.$inferSelect;
export type NewMemory = typeof memories.$inferInsert;

import type { Reader } from '../client.js';
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import {
  domainEvents,
  type DomainEventKind,
  type DomainEventRow,
  type NewDomainEventRow,
} from '../schema/index.js';
import type { Queryable } from './statement.js';

type Details = Record<string, unknown>;

interface EventOf<Kind extends DomainEventKind, Rule extends string, MemoryId = string> {
  kind: Kind;
  workspaceId: string;
  memoryId: MemoryId;
  rule: Rule;
  relatedMemoryId?: string | null;
  details?: Details;
}

/**
 * Every change the outbox records, one union: what it did (`kind`), to which memory, by which
 * rule. Written only through {@link EventOutbox} (or, inside a write's own statement, through
 * {@link eventRecords} and {@link insertEventsFromJson}), so each lands in the change's
 * transaction.
 */
export type DomainEvent =
  /** A memory stored by a write (extracted children are `extracted` instead). */
  | EventOf<'created', 'write'>
  /** A child memory an extractor made from the memory `relatedMemoryId`. */
  | EventOf<'extracted', `extractor:${string}`>
  /** A write found its text already stored as `memoryId`; nothing new was stored. */
  | EventOf<'deduped', 'exact' | 'near' | 'semantic' | 'concurrent'>
  /** `memoryId` was superseded by `relatedMemoryId` (or, `conflict_older`, kept as its history). */
  | EventOf<'replaced', string>
  /** A refining write rewrote `memoryId` in place. */
  | EventOf<'merged', 'evolution'>
  | EventOf<'archived', 'expiry' | 'retention'>
  /** `request`: the memory asked for; `parent_deleted`: a child that went with it. */
  | EventOf<'deleted', 'request' | 'parent_deleted'>
  /** A vote on a search or context call; the memories it moved are in `details`. */
  | EventOf<'feedback', 'search' | 'context', null>
  /** An owner erased; `details` is the receipt (counts, a hash of the owner), no content. */
  | EventOf<'erased', 'request', null>;

/** The kinds the memory object's `lifecycle_events` shows: its history, as before the outbox. */
export const LIFECYCLE_HISTORY_KINDS = [
  'extracted',
  'replaced',
  'merged',
  'archived',
] as const satisfies readonly DomainEventKind[];

/** The one mapping of an event to its row. */
export function toEventRow(event: DomainEvent): NewDomainEventRow {
  return {
    workspaceId: event.workspaceId,
    kind: event.kind,
    memoryId: event.memoryId,
    rule: event.rule,
    relatedMemoryId: event.relatedMemoryId ?? null,
    details: event.details ?? {},
  };
}

/** The events as the JSON that {@link insertEventsFromJson} reads. */
export function eventRecords(events: readonly DomainEvent[]): string {
  return JSON.stringify(
    events.map((event) => {
      const row = toEventRow(event);
      return {
        workspace_id: row.workspaceId,
        kind: row.kind,
        memory_id: row.memoryId,
        rule: row.rule,
        related_memory_id: row.relatedMemoryId,
        details: row.details,
      };
    }),
  );
}

/** The outbox's columns, in the order every insert names them. */
export const EVENT_COLUMNS = 'workspace_id, kind, memory_id, rule, related_memory_id, details';

/**
 * For a write's own statement (a CTE of it): inserts the events of the JSON parameter `param`
 * ({@link eventRecords}), joined with `from` (e.g. `memory`, so they are written only when the
 * memory is) and filtered by `where`.
 */
export function insertEventsFromJson(
  param: string,
  {
    from,
    where,
    memoryId = 'e.memory_id',
  }: {
    from?: string;
    where?: string;
    /** The memory named by the statement itself when only it knows which (a raced duplicate). */
    memoryId?: string;
  } = {},
): string {
  return `insert into domain_events (${EVENT_COLUMNS})
  select e.workspace_id, e.kind, ${memoryId}, e.rule, e.related_memory_id, e.details
  from ${from ? `${from}, ` : ''}jsonb_to_recordset(${param}::jsonb)
    as e (workspace_id uuid, kind text, memory_id uuid, rule text, related_memory_id uuid, details jsonb)
  ${where ? `where ${where}` : ''}`;
}

/**
 * For set-based SQL whose events come from its own rows (retention): `select` must yield
 * {@link EVENT_COLUMNS} and `created_at`, in that order.
 */
export function insertEventsSelected(select: SQL): SQL {
  return sql`insert into domain_events (${sql.raw(EVENT_COLUMNS)}, created_at) ${select}`;
}

/** The one port changes emit through: the rows go into the caller's transaction. */
export interface EventOutbox {
  emit(tx: Queryable, events: readonly DomainEvent[]): Promise<void>;
}

export const eventOutbox: EventOutbox = {
  async emit(tx, events) {
    if (events.length > 0) await tx.insert(domainEvents).values(events.map(toEventRow));
  },
};

/** The lifecycle history of these memories, oldest first (one query for a page of memories). */
export async function lifecycleHistoryFor(
  db: Reader,
  workspaceId: string,
  memoryIds: string[],
): Promise<DomainEventRow[]> {
  if (memoryIds.length === 0) return [];
  return db
    .select()
    .from(domainEvents)
    .where(
      and(
        eq(domainEvents.workspaceId, workspaceId),
        inArray(domainEvents.memoryId, memoryIds),
        inArray(domainEvents.kind, [...LIFECYCLE_HISTORY_KINDS]),
      ),
    )
    .orderBy(asc(domainEvents.createdAt), asc(domainEvents.seq));
}

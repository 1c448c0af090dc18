import { and, eq, gte, inArray, or, sql } from 'drizzle-orm';
import { DatabaseError, ServiceError } from '../../errors.js';
import { type Reader, type Writer, executeRows, statementPoolOf } from '../client.js';
import { lostAnswer } from '../faults.js';
import { auditLog, memories, type ReservedAmount, usageCounters } from '../schema/index.js';
import { type Queryable, type Step, step, Statement } from './statement.js';

export type WindowKind = ReservedAmount['window_kind'];

/** One counter a reservation asks for: `amount` more of `resource` in a window, under `cap`. */
export interface ReserveItem {
  resource: string;
  windowKind: WindowKind;
  /** `YYYY-MM-DD`. */
  windowStart: string;
  amount: number;
  cap: number;
  /** When the window ends (the Retry-After of a refusal); undefined: it never resets (storage). */
  resetsAt: Date | undefined;
}

export interface ReserveInput {
  reservationId: string;
  workspaceId: string;
  items: ReserveItem[];
  expiresAt: Date;
  now: Date;
  /** Named in the refusal's message. */
  plan?: string;
}

/**
 * Counters one reservation may hold (one per resource today). The statements say so to the
 * planner (`limit`): told nothing, it expects a hundred rows from a JSON array and joins them by
 * scanning every counter of the workspace, which grows by a row per resource per day.
 */
const MAX_ITEMS = 16;

/** A counter as a reservation found it (before adding its own amount). */
export interface CounterState {
  resource: string;
  window_kind: WindowKind;
  window_start: string;
  used: number;
  reserved: number;
  amount: number;
  cap: number;
}

// Every statement here locks counter rows in one order, (workspace, window kind, window start,
// resource), so that reservations, settlements and reconciliation never deadlock each other:
// the rows to lock come sorted (reservation amounts are stored sorted) and each is looked up and
// locked by its key, in that order, in a LATERAL subquery. A plain join would let the planner
// scan every counter of the workspace (a row per resource per day) and lock in another order.

/**
 * Runs one metering statement as a transaction of its own that does not wait for the disk
 * (`synchronous_commit = off`): on PostgreSQL, on the metering connections, whose sessions are
 * set so (db/client.ts), one statement on the wire; the commit skips the WAL flush that otherwise
 * costs more than the statement (0.6 ms measured on the CI VM). Other sessions see the change at
 * once, and every decision is taken under the row locks, so concurrency is unaffected. The price:
 * a crash of the database server can lose the last fraction of a second of metering (those
 * requests go uncounted), never memories or entitlements, which commit as usual. On PGlite (one
 * connection, nothing to flush for) it runs as it is.
 */
async function meteringTrip<Row extends Record<string, unknown>>(
  db: Queryable,
  { statement, params }: Step,
): Promise<Row[]> {
  const target = statementPoolOf(db)?.asyncCommit ?? db;
  return statement.run<Row>(target, params as never);
}

/**
 * The reservation, in one statement: lock the request's counter rows, decide (all rows exist and
 * each has `used + reserved + amount <= cap`), then, only when granted, add the amounts to
 * `reserved` and store the reservation. Rows are read after their lock is taken (READ COMMITTED
 * re-reads a row a concurrent transaction changed), so of two requests racing for the last unit
 * the second sees the first's reservation. A missing row (first use of a window) is not granted
 * here: the caller creates it and runs the statement again.
 */
const reserveStatement = new Statement<{
  workspaceId: string;
  items: string;
  id: string;
  amounts: string;
  expiresAt: string;
  now: string;
}>(`
with req as (
  select * from json_to_recordset(:items::json)
    as r(resource text, window_kind text, window_start date, amount bigint, cap bigint)
  order by r.window_kind collate "C", r.window_start, r.resource collate "C"
  limit ${MAX_ITEMS}
),
locked as (
  select k.*, r.amount, r.cap
  from req r
  cross join lateral (
    select c.window_kind, c.window_start, c.resource, c.used, c.reserved
    from usage_counters c
    where c.workspace_id = :workspaceId::uuid and c.window_kind = r.window_kind
      and c.window_start = r.window_start and c.resource = r.resource
    for update
  ) k
),
verdict as (
  select count(*) = (select count(*) from req) as complete,
    coalesce(bool_and(used + reserved + amount <= cap), true) as within
  from locked
),
bumped as (
  update usage_counters c
  set reserved = c.reserved + l.amount, updated_at = :now::timestamptz
  from locked l, verdict v
  where v.complete and v.within
    and c.workspace_id = :workspaceId::uuid and c.window_kind = l.window_kind
    and c.window_start = l.window_start and c.resource = l.resource
  returning c.resource
),
reservation as (
  insert into usage_reservations (id, workspace_id, amounts, state, expires_at, created_at)
  select :id::uuid, :workspaceId::uuid, :amounts::jsonb, 'reserved', :expiresAt::timestamptz,
    :now::timestamptz
  from verdict where complete and within
  returning id
)
select v.complete, v.within, (select count(*) from reservation)::int as stored,
  (select count(*) from bumped)::int as bumped,
  coalesce((select json_agg(json_build_object(
    'resource', l.resource, 'window_kind', l.window_kind, 'window_start', l.window_start,
    'used', l.used, 'reserved', l.reserved, 'amount', l.amount, 'cap', l.cap)) from locked l),
    '[]'::json) as counters
from verdict v`);

/** Creates the counter rows a reservation needs that do not exist yet. */
const ensureCountersStatement = new Statement<{ workspaceId: string; items: string; now: string }>(`
insert into usage_counters (workspace_id, window_kind, window_start, resource, updated_at)
select :workspaceId::uuid, r.window_kind, r.window_start, r.resource, :now::timestamptz
from json_to_recordset(:items::json) as r(resource text, window_kind text, window_start date)
order by r.window_kind collate "C", r.window_start, r.resource collate "C"
on conflict do nothing`);

const toJsonItems = (items: ReserveItem[]) =>
  JSON.stringify(
    items.map((item) => ({
      resource: item.resource,
      window_kind: item.windowKind,
      window_start: item.windowStart,
      amount: item.amount,
      cap: item.cap,
    })),
  );

/**
 * Reserves every item or none (one statement; a second and third only on the first use of a
 * window) and returns the counters as they were before it. Throws `CAP_EXCEEDED` naming each resource over its cap, with `Retry-After` the
 * seconds until the last of their windows resets.
 */
export async function reserveUsage(db: Queryable, input: ReserveInput): Promise<CounterState[]> {
  if (input.items.length > MAX_ITEMS) {
    throw new DatabaseError(`a reservation holds at most ${MAX_ITEMS} counters`);
  }
  const items = [...input.items].sort(byCounterKey);
  const params = {
    workspaceId: input.workspaceId,
    items: toJsonItems(items),
    id: input.reservationId,
    amounts: JSON.stringify(
      items.map((item): ReservedAmount => ({
        resource: item.resource,
        window_kind: item.windowKind,
        window_start: item.windowStart,
        amount: item.amount,
      })),
    ),
    expiresAt: input.expiresAt.toISOString(),
    now: input.now.toISOString(),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    const [row] = await meteringTrip<{
      complete: boolean;
      within: boolean;
      stored: number;
      counters: CounterState[];
    }>(db, step(reserveStatement, params));
    // Lost after a commit, the reservation expires and reconciliation refunds it.
    if (!row) throw lostAnswer('usage reservation');
    if (!row.within) throw capExceeded(items, row.counters, input);
    if (row.complete) {
      if (row.stored !== 1) throw new DatabaseError('usage reservation was granted but not stored');
      return row.counters;
    }
    await ensureCountersStatement.run(db, {
      workspaceId: input.workspaceId,
      items: params.items,
      now: params.now,
    });
  }
  throw new DatabaseError('usage counters missing right after being created');
}

/** Code-unit order, as `collate "C"` sorts in SQL. */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function byCounterKey(
  a: { windowKind: string; windowStart: string; resource: string },
  b: typeof a,
): number {
  return (
    compare(a.windowKind, b.windowKind) ||
    compare(a.windowStart, b.windowStart) ||
    compare(a.resource, b.resource)
  );
}

const WINDOW_WORDS: Record<WindowKind, string> = {
  day: 'today',
  period: 'this period',
  total: 'stored',
};

function capExceeded(items: ReserveItem[], counters: CounterState[], input: ReserveInput) {
  const over = counters.filter(
    (c) => Number(c.used) + Number(c.reserved) + Number(c.amount) > Number(c.cap),
  );
  const details: Record<string, string[]> = {};
  let resetsAt: Date | undefined;
  let resets = true;
  for (const counter of over) {
    const taken = Number(counter.used) + Number(counter.reserved);
    details[counter.resource] = [
      `${taken} of ${counter.cap} used or reserved ${WINDOW_WORDS[counter.window_kind]}; ${counter.amount} more requested`,
    ];
    const item = items.find(
      (i) => i.resource === counter.resource && i.windowKind === counter.window_kind,
    );
    if (!item?.resetsAt) resets = false;
    else if (!resetsAt || item.resetsAt > resetsAt) resetsAt = item.resetsAt;
  }
  const names = over.map((c) => `${c.resource} (${WINDOW_WORDS[c.window_kind]})`).join(', ');
  const plan = input.plan ? ` of the ${input.plan} plan` : '';
  // Waiting helps only if every cap in the way resets (storage does not).
  const retryAfter =
    resets && resetsAt
      ? Math.max(1, Math.ceil((resetsAt.getTime() - input.now.getTime()) / 1000))
      : undefined;
  const when =
    retryAfter === undefined ? 'it does not reset by itself' : `it resets in ${retryAfter} s`;
  return new ServiceError(
    'CAP_EXCEEDED',
    `Usage cap${plan} exceeded: ${names}; ${when}`,
    details,
    retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) },
  );
}

/**
 * Settles a reservation, in one statement that deletes it: `committed` adds what was consumed
 * to `used` (`actual` amounts by resource where given, else what was reserved), `released` adds
 * nothing; both take the reservation back off `reserved`. A reservation reconciliation already
 * expired (and refunded) can still be committed: its consumption is counted, nothing is refunded
 * twice. Settling twice changes nothing: the row is gone. (A delete racing reconciliation's
 * update of the same row sees the updated row: READ COMMITTED re-reads it.)
 */
const settleStatement = new Statement<{
  id: string;
  outcome: string;
  actual: string;
  now: string;
}>(`
with settled as (
  delete from usage_reservations
  where id = :id::uuid
  returning workspace_id, state as was, amounts
),
deltas as (
  select s.workspace_id, a.window_kind, a.window_start, a.resource,
    case when s.was = 'reserved' then a.amount else 0 end as unreserve,
    case when :outcome::text = 'committed' then coalesce(x.amount, a.amount) else 0 end as consume
  from settled s
  cross join lateral jsonb_to_recordset(s.amounts)
    as a(resource text, window_kind text, window_start date, amount bigint)
  left join json_to_recordset(:actual::json) as x(resource text, amount bigint)
    on x.resource = a.resource
  order by a.window_kind collate "C", a.window_start, a.resource collate "C"
  limit ${MAX_ITEMS}
),
locked as (
  select k.*, d.unreserve, d.consume
  from deltas d
  cross join lateral (
    select c.workspace_id, c.window_kind, c.window_start, c.resource
    from usage_counters c
    where c.workspace_id = d.workspace_id and c.window_kind = d.window_kind
      and c.window_start = d.window_start and c.resource = d.resource
    for update
  ) k
),
applied as (
  update usage_counters c
  set reserved = greatest(c.reserved - l.unreserve, 0), used = c.used + l.consume,
    updated_at = :now::timestamptz
  from locked l
  where c.workspace_id = l.workspace_id and c.window_kind = l.window_kind
    and c.window_start = l.window_start and c.resource = l.resource
  returning 1
)
select (select was from settled) as was, (select count(*) from applied)::int as applied`);

export interface SettleInput {
  reservationId: string;
  outcome: 'committed' | 'released';
  /** Consumed amounts by resource, replacing the reserved ones (commit only). */
  actual?: Record<string, number>;
  now: Date;
}

/** Returns the state the reservation was settled from, or undefined when it was already settled. */
export async function settleReservation(
  db: Queryable,
  input: SettleInput,
): Promise<'reserved' | 'expired' | undefined> {
  const actual = Object.entries(input.actual ?? {}).map(([resource, amount]) => ({
    resource,
    amount,
  }));
  const [row] = await meteringTrip<{ was: 'reserved' | 'expired' | null }>(
    db,
    step(settleStatement, {
      id: input.reservationId,
      outcome: input.outcome,
      actual: JSON.stringify(actual),
      now: input.now.toISOString(),
    }),
  );
  return row?.was ?? undefined;
}

/**
 * Expires up to `limit` reservations whose `expires_at` has passed and refunds what they held,
 * in one statement; reservations being settled right now are skipped (SKIP LOCKED). Returns how
 * many expired.
 */
export async function expireReservations(
  db: Queryable,
  { now, limit }: { now: Date; limit: number },
): Promise<number> {
  const [row] = await executeRows<{ expired: number }>(
    db,
    sql`
with due as (
  select id from usage_reservations
  where state = 'reserved' and expires_at <= ${now.toISOString()}::timestamptz
  order by expires_at
  limit ${limit}
  for update skip locked
),
expired as (
  update usage_reservations r
  set state = 'expired', expired_at = ${now.toISOString()}::timestamptz
  from due where r.id = due.id
  returning r.workspace_id, r.amounts
),
deltas as (
  select e.workspace_id, a.window_kind, a.window_start, a.resource, sum(a.amount) as amount
  from expired e
  cross join lateral jsonb_to_recordset(e.amounts)
    as a(resource text, window_kind text, window_start date, amount bigint)
  group by 1, 2, 3, 4
  order by e.workspace_id, a.window_kind collate "C", a.window_start, a.resource collate "C"
),
locked as (
  select k.*, d.amount
  from deltas d
  cross join lateral (
    select c.workspace_id, c.window_kind, c.window_start, c.resource
    from usage_counters c
    where c.workspace_id = d.workspace_id and c.window_kind = d.window_kind
      and c.window_start = d.window_start and c.resource = d.resource
    for update
  ) k
),
refunded as (
  update usage_counters c
  set reserved = greatest(c.reserved - l.amount, 0), updated_at = ${now.toISOString()}::timestamptz
  from locked l
  where c.workspace_id = l.workspace_id and c.window_kind = l.window_kind
    and c.window_start = l.window_start and c.resource = l.resource
  returning 1
)
select (select count(*) from expired)::int as expired, (select count(*) from refunded)::int as refunded`,
  );
  return Number(row?.expired ?? 0);
}

/** Deletes up to `limit` reservations expired before `before`; returns how many. */
export async function purgeExpiredReservations(
  db: Queryable,
  { before, limit }: { before: Date; limit: number },
): Promise<number> {
  const rows = await executeRows<{ id: string }>(
    db,
    sql`
delete from usage_reservations where id in (
  select id from usage_reservations
  where state = 'expired' and expired_at < ${before.toISOString()}::timestamptz
  order by expired_at
  limit ${limit}
)
returning id`,
  );
  return rows.length;
}

export interface CounterWindow {
  kind: WindowKind;
  start: string;
}

export interface CounterRow {
  windowKind: WindowKind;
  windowStart: string;
  resource: string;
  used: number;
  reserved: number;
}

/** The workspace's counters in the given windows (rows not yet created are simply absent). */
export async function readUsageCounters(
  db: Reader,
  workspaceId: string,
  windows: CounterWindow[],
): Promise<CounterRow[]> {
  if (windows.length === 0) return [];
  return db
    .select({
      windowKind: usageCounters.windowKind,
      windowStart: usageCounters.windowStart,
      resource: usageCounters.resource,
      used: usageCounters.used,
      reserved: usageCounters.reserved,
    })
    .from(usageCounters)
    .where(
      and(
        eq(usageCounters.workspaceId, workspaceId),
        or(
          ...windows.map((w) =>
            and(eq(usageCounters.windowKind, w.kind), eq(usageCounters.windowStart, w.start)),
          ),
        ),
      ),
    );
}

/**
 * Takes `amount` off what a counter has used (never below zero): stored bytes freed when
 * memories are deleted. A counter that does not exist has nothing to take off.
 */
export async function decreaseUsed(
  db: Writer,
  counter: {
    workspaceId: string;
    windowKind: WindowKind;
    windowStart: string;
    resource: string;
    amount: number;
    now: Date;
  },
): Promise<void> {
  await db
    .update(usageCounters)
    .set({
      used: sql`greatest(${usageCounters.used} - ${counter.amount}, 0)`,
      updatedAt: counter.now,
    })
    .where(
      and(
        eq(usageCounters.workspaceId, counter.workspaceId),
        eq(usageCounters.windowKind, counter.windowKind),
        eq(usageCounters.windowStart, counter.windowStart),
        eq(usageCounters.resource, counter.resource),
      ),
    );
}

/** One UTC day of a workspace's metered counters and audited requests. */
export interface UsageDayRow {
  day: string;
  requests: number;
  rateLimited: number;
  writes: number;
  reads: number;
  embeds: number;
}

/**
 * The workspace's daily counters (writes, reads, embeds) and its audited requests per UTC day
 * from `firstDay` on. Days without either are absent; the caller fills the gaps.
 */
export async function readUsageHistory(
  db: Reader,
  workspaceId: string,
  firstDay: string,
): Promise<UsageDayRow[]> {
  const [counters, requests] = await Promise.all([
    db
      .select({
        day: usageCounters.windowStart,
        resource: usageCounters.resource,
        used: usageCounters.used,
      })
      .from(usageCounters)
      .where(
        and(
          eq(usageCounters.workspaceId, workspaceId),
          eq(usageCounters.windowKind, 'day'),
          gte(usageCounters.windowStart, firstDay),
          inArray(usageCounters.resource, ['writes', 'reads', 'embeds']),
        ),
      ),
    db
      .select({
        day: sql<string>`to_char(${auditLog.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`,
        requests: sql<number>`count(*)::int`,
        rateLimited: sql<number>`(count(*) filter (where ${auditLog.status} = 429))::int`,
      })
      .from(auditLog)
      .where(
        and(
          eq(auditLog.workspaceId, workspaceId),
          gte(auditLog.createdAt, new Date(`${firstDay}T00:00:00Z`)),
        ),
      )
      .groupBy(sql`1`),
  ]);
  const byDay = new Map<string, UsageDayRow>();
  const dayOf = (day: string) => {
    let row = byDay.get(day);
    if (!row) {
      row = { day, requests: 0, rateLimited: 0, writes: 0, reads: 0, embeds: 0 };
      byDay.set(day, row);
    }
    return row;
  };
  for (const counter of counters) {
    const row = dayOf(counter.day);
    const used = Number(counter.used);
    if (counter.resource === 'writes') row.writes = used;
    else if (counter.resource === 'reads') row.reads = used;
    else if (counter.resource === 'embeds') row.embeds = used;
  }
  for (const audited of requests) {
    const row = dayOf(audited.day);
    row.requests = Number(audited.requests);
    row.rateLimited = Number(audited.rateLimited);
  }
  return [...byDay.values()];
}

export interface OwnerCount {
  ownerId: string;
  ownerType: string;
  total: number;
  active: number;
}

/** The workspace's memories by lifecycle state, and its `limit` largest owners. */
export async function readMemoryBreakdown(
  db: Reader,
  workspaceId: string,
  limit: number,
): Promise<{ byState: Map<string, number>; owners: OwnerCount[]; ownerCount: number }> {
  const inWorkspace = eq(memories.workspaceId, workspaceId);
  const [states, owners, [distinct]] = await Promise.all([
    db
      .select({ state: memories.lifecycleState, total: sql<number>`count(*)::int` })
      .from(memories)
      .where(inWorkspace)
      .groupBy(memories.lifecycleState),
    db
      .select({
        ownerId: memories.ownerId,
        ownerType: memories.ownerType,
        total: sql<number>`count(*)::int`,
        active: sql<number>`(count(*) filter (where ${memories.lifecycleState} = 'active'))::int`,
      })
      .from(memories)
      .where(inWorkspace)
      .groupBy(memories.ownerType, memories.ownerId)
      .orderBy(sql`count(*) desc`, memories.ownerId)
      .limit(limit),
    db
      .select({
        owners: sql<number>`count(distinct (${memories.ownerType}, ${memories.ownerId}))::int`,
      })
      .from(memories)
      .where(inWorkspace),
  ]);
  return {
    byState: new Map(states.map((row) => [row.state, Number(row.total)])),
    owners: owners.map((row) => ({ ...row, total: Number(row.total), active: Number(row.active) })),
    ownerCount: Number(distinct?.owners ?? 0),
  };
}

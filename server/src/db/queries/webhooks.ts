import type { Reader, Writer } from '../client.js';
import { executeRows } from '../client.js';
import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import {
  webhookDeliveries,
  webhookEndpoints,
  type DomainEventKind,
  type WebhookDeliveryRow,
  type WebhookDeliveryState,
  type WebhookEndpointRow,
} from '../schema/index.js';
import type { Queryable } from './statement.js';

/**
 * The public event type of an outbox event: its kind, except that an extracted child is a
 * created memory and an archived one is `expired` or `archived` by the rule that archived it.
 */
const EVENT_TYPE_OF_KIND: Record<DomainEventKind, string> = {
  created: 'memory.created',
  extracted: 'memory.created',
  deduped: 'memory.deduped',
  replaced: 'memory.superseded',
  merged: 'memory.merged',
  archived: 'memory.archived',
  deleted: 'memory.deleted',
  feedback: 'search.feedback',
  erased: 'owner.erased',
};

/** {@link EVENT_TYPE_OF_KIND} in SQL, over the outbox row `e`. */
const eventTypeSql = sql.raw(
  `case when e.kind = 'archived' and e.rule = 'expiry' then 'memory.expired' ${Object.entries(
    EVENT_TYPE_OF_KIND,
  )
    .map(([kind, type]) => `when e.kind = '${kind}' then '${type}'`)
    .join(' ')} end`,
);

export type NewWebhookEndpoint = Pick<
  WebhookEndpointRow,
  'workspaceId' | 'url' | 'description' | 'eventTypes' | 'secretCiphertext'
>;

/** Inserts an endpoint that sees the outbox's events from now on (`seq_floor`: the newest). */
export async function insertEndpoint(
  db: Queryable,
  endpoint: NewWebhookEndpoint,
): Promise<WebhookEndpointRow> {
  const [row] = await db
    .insert(webhookEndpoints)
    .values({ ...endpoint, seqFloor: sql`${newestSeq(endpoint.workspaceId)}` })
    .returning();
  if (!row) throw new DatabaseError('webhook endpoint insert returned no row');
  return row;
}

/** The newest outbox `seq` of the workspace (0: none). */
function newestSeq(workspaceId: string): SQL {
  return sql`(select coalesce(max(seq), 0) from domain_events where workspace_id = ${workspaceId})`;
}

export async function countEndpoints(db: Reader, workspaceId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.workspaceId, workspaceId));
  return row?.n ?? 0;
}

export async function listEndpoints(
  db: Reader,
  workspaceId: string,
): Promise<WebhookEndpointRow[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.workspaceId, workspaceId))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

export async function findEndpoint(
  db: Reader,
  workspaceId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)));
  return row;
}

export interface EndpointChanges {
  url?: string;
  description?: string;
  eventTypes?: string[];
  enabled?: boolean;
  secretCiphertext?: string;
  previousSecretCiphertext?: string | null;
  previousSecretExpiresAt?: Date | null;
}

/**
 * Applies the changes; undefined when the workspace has no such endpoint. Enabling a disabled
 * endpoint moves its floor to the newest event: what happened while it was off is not sent.
 */
export async function updateEndpoint(
  db: Queryable,
  workspaceId: string,
  id: string,
  changes: EndpointChanges,
): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      ...changes,
      ...(changes.enabled === true
        ? {
            seqFloor: sql`case when ${webhookEndpoints.enabled} then ${webhookEndpoints.seqFloor} else ${newestSeq(workspaceId)} end`,
          }
        : {}),
      updatedAt: sql`now()`,
    })
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

export async function deleteEndpoint(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const rows = await db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

export async function listDeliveries(
  db: Reader,
  endpointId: string,
  {
    status,
    limit,
    offset,
  }: { status: WebhookDeliveryState | undefined; limit: number; offset: number },
): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
  const where = and(
    eq(webhookDeliveries.endpointId, endpointId),
    status ? eq(webhookDeliveries.status, status) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(webhookDeliveries)
      .where(where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.eventSeq))
      .limit(limit)
      .offset(offset),
    db.select({ n: count() }).from(webhookDeliveries).where(where),
  ]);
  return { rows, total: total?.n ?? 0 };
}

export async function findDelivery(
  db: Reader,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.id, id)));
  return row;
}

/**
 * Queues a finished delivery again, due now, its attempts counted afresh; undefined when it is
 * not finished (still pending or in flight).
 */
export async function requeueDelivery(
  db: Queryable,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryRow | undefined> {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', attempts: 0, nextAttemptAt: sql`now()` })
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.id, id),
        sql`${webhookDeliveries.status} in ('succeeded', 'failed')`,
      ),
    )
    .returning();
  return row;
}

/** Enabled endpoints whose workspace has outbox events above their floor. */
export async function endpointsBehind(db: Reader): Promise<Array<{ id: string }>> {
  return executeRows<{ id: string }>(
    db,
    sql`select w.id from webhook_endpoints w
      where w.enabled and exists (
        select 1 from domain_events e where e.workspace_id = w.workspace_id and e.seq > w.seq_floor)`,
  );
}

/**
 * Fans the endpoint's new outbox events out into deliveries, in one transaction that holds the
 * endpoint (SKIP LOCKED: another instance doing the same skips it). Events are taken in `seq`
 * order, at most `batch`, skipping those already fanned out; the floor then moves past the
 * events older than `settleMs`. Only a transaction still open after `settleMs` could add an event
 * below the floor, so the floor trails by that much. Returns how many deliveries it made, or
 * undefined when another instance holds the endpoint.
 */
export async function fanOutEndpoint(
  db: Writer,
  endpointId: string,
  { batch, settleMs }: { batch: number; settleMs: number },
): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const [endpoint] = await executeRows<{ workspace_id: string; seq_floor: string }>(
      tx,
      sql`select workspace_id, seq_floor::text as seq_floor from webhook_endpoints
        where id = ${endpointId} and enabled for update skip locked`,
    );
    if (!endpoint) return undefined;
    const floor = endpoint.seq_floor;
    const inserted = await executeRows<{ id: string }>(
      tx,
      sql`insert into webhook_deliveries
          (workspace_id, endpoint_id, event_id, event_seq, event_type, memory_id, payload, next_attempt_at)
        select e.workspace_id, ${endpointId}, e.id, e.seq, e.type, e.memory_id,
          jsonb_build_object(
            'type', e.type,
            'timestamp', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'data', jsonb_build_object(
              'event_id', e.id,
              'workspace_id', e.workspace_id,
              'memory_id', e.memory_id,
              'related_memory_id', e.related_memory_id,
              'rule', e.rule,
              'details', e.details)),
          now()
        from (
          select e.*, ${eventTypeSql} as type from domain_events e
          where e.workspace_id = ${endpoint.workspace_id} and e.seq > ${floor}::bigint
        ) e
        cross join (select event_types from webhook_endpoints where id = ${endpointId}) w
        where (cardinality(w.event_types) = 0 or e.type = any(w.event_types))
          and not exists (
            select 1 from webhook_deliveries d where d.endpoint_id = ${endpointId} and d.event_id = e.id)
        order by e.seq
        limit ${batch}
        on conflict (endpoint_id, event_id) do nothing
        returning id`,
    );
    if (inserted.length < batch) {
      await tx.execute(
        sql`update webhook_endpoints set seq_floor = coalesce((
            select max(seq) from domain_events
            where workspace_id = ${endpoint.workspace_id} and seq > ${floor}::bigint
              and created_at < now() - make_interval(secs => ${settleMs / 1000})
          ), seq_floor)
          where id = ${endpointId}`,
      );
    }
    return inserted.length;
  });
}

/** A claimed delivery: what its attempt sends, and where. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  eventId: string;
  /** The body, exactly as stored (every attempt sends the same bytes). */
  body: string;
  url: string;
  secretCiphertext: string;
  /** Still signing after a rotation. */
  previousSecretCiphertext: string | null;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints (SKIP LOCKED, so each is claimed by
 * one instance) and marks them `sending` until `leaseMs` from now: past it, a delivery whose
 * sender died is due again. A delivery waits while an earlier event of the same memory to the
 * same endpoint is still open, so a memory's events arrive in order.
 */
export async function claimDueDeliveries(
  db: Queryable,
  { limit, leaseMs }: { limit: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  const rows = await executeRows<{
    id: string;
    attempts: number;
    event_id: string;
    body: string;
    url: string;
    secret_ciphertext: string;
    previous_secret_ciphertext: string | null;
  }>(
    db,
    sql`with due as (
        select d.id from webhook_deliveries d
        join webhook_endpoints w on w.id = d.endpoint_id and w.enabled
        where d.status in ('pending', 'sending') and d.next_attempt_at <= now()
          and not exists (
            select 1 from webhook_deliveries earlier
            where earlier.endpoint_id = d.endpoint_id and earlier.memory_id = d.memory_id
              and earlier.event_seq < d.event_seq and earlier.status in ('pending', 'sending'))
        order by d.next_attempt_at, d.event_seq
        limit ${limit}
        for update of d skip locked
      )
      update webhook_deliveries d
      set status = 'sending', attempts = d.attempts + 1, last_attempt_at = now(),
        next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
      from due, webhook_endpoints w
      where d.id = due.id and w.id = d.endpoint_id
      returning d.id, d.attempts, d.event_id, d.payload::text as body, w.url,
        w.secret_ciphertext,
        case when w.previous_secret_expires_at > now() then w.previous_secret_ciphertext end
          as previous_secret_ciphertext`,
  );
  return rows.map((row) => ({
    id: row.id,
    attempts: Number(row.attempts),
    eventId: row.event_id,
    body: row.body,
    url: row.url,
    secretCiphertext: row.secret_ciphertext,
    previousSecretCiphertext: row.previous_secret_ciphertext,
  }));
}

/**
 * Records an attempt's outcome: `succeeded`, `failed` (no attempts left) or `pending` again at
 * `retryAt`. Only while the claim is still this attempt's (a later claim of the same delivery,
 * after its lease ran out, wins).
 */
export async function recordAttempt(
  db: Queryable,
  claim: Pick<ClaimedDelivery, 'id' | 'attempts'>,
  outcome: {
    status: 'succeeded' | 'failed' | 'pending';
    responseStatus: number | null;
    error: string | null;
    retryAt: Date | null;
  },
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      status: outcome.status,
      responseStatus: outcome.responseStatus,
      lastError: outcome.error,
      nextAttemptAt: outcome.retryAt,
    })
    .where(
      and(
        eq(webhookDeliveries.id, claim.id),
        eq(webhookDeliveries.attempts, claim.attempts),
        eq(webhookDeliveries.status, 'sending'),
      ),
    );
}

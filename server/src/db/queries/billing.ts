import type { Reader, Writer } from '../client.js';
import { and, asc, count, eq, isNull, lte, max, min, or } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import type { Database } from '../client.js';
import {
  type BillingTransaction,
  billingAccounts,
  billingTransactions,
  type NewBillingTransaction,
  type WebhookEvent,
  webhookEvents,
  workspaceEntitlements,
} from '../schema/index.js';
import { upsertEntitlement } from './entitlements.js';
import type { Queryable } from './statement.js';
import { lostAnswer } from '../faults.js';

export async function insertBillingTransaction(
  db: Writer,
  transaction: Pick<
    NewBillingTransaction,
    'workspaceId' | 'provider' | 'txnid' | 'plan' | 'amount' | 'currency'
  >,
): Promise<BillingTransaction> {
  const [row] = await db.insert(billingTransactions).values(transaction).returning();
  if (!row) throw lostAnswer('insert into billing_transactions');
  return row;
}

export async function getBillingTransaction(
  db: Reader,
  provider: string,
  txnid: string,
): Promise<BillingTransaction | undefined> {
  const [row] = await db
    .select()
    .from(billingTransactions)
    .where(and(eq(billingTransactions.provider, provider), eq(billingTransactions.txnid, txnid)))
    .limit(1);
  return row;
}

/**
 * Stores a callback as a `deferred` event unless one with its key exists; returns the stored
 * event and whether this call inserted it.
 */
export async function recordWebhookEvent(
  db: Writer,
  event: {
    provider: string;
    eventKey: string;
    txnid: string;
    paymentStatus: string;
    fields: Record<string, string>;
    now: Date;
  },
): Promise<{ event: WebhookEvent; inserted: boolean }> {
  const { now, ...values } = event;
  const [inserted] = await db
    .insert(webhookEvents)
    .values({ ...values, state: 'deferred', nextAttemptAt: now })
    .onConflictDoNothing({ target: [webhookEvents.provider, webhookEvents.eventKey] })
    .returning();
  if (inserted) return { event: inserted, inserted: true };
  const [existing] = await db
    .select()
    .from(webhookEvents)
    .where(
      and(eq(webhookEvents.provider, event.provider), eq(webhookEvents.eventKey, event.eventKey)),
    )
    .limit(1);
  if (!existing)
    throw new DatabaseError('webhook event vanished right after a conflict on its key');
  return { event: existing, inserted: false };
}

export async function getWebhookEvent(db: Reader, id: string): Promise<WebhookEvent | undefined> {
  const [row] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, id)).limit(1);
  return row;
}

/** Notes the transaction's workspace on the event (for the degraded-mode check). */
export async function setWebhookEventWorkspace(
  db: Writer,
  id: string,
  workspaceId: string,
): Promise<void> {
  await db
    .update(webhookEvents)
    .set({ workspaceId })
    .where(and(eq(webhookEvents.id, id), isNull(webhookEvents.workspaceId)));
}

/** Another try later; only while the event is still deferred. */
export async function deferWebhookEvent(
  db: Writer,
  change: { id: string; attempts: number; nextAttemptAt: Date; error: string },
): Promise<void> {
  await db
    .update(webhookEvents)
    .set({ attempts: change.attempts, nextAttemptAt: change.nextAttemptAt, error: change.error })
    .where(and(eq(webhookEvents.id, change.id), eq(webhookEvents.state, 'deferred')));
}

/**
 * Locks a still-deferred event for the rest of the transaction; undefined when another run
 * finished it meanwhile (the caller then changes nothing).
 */
async function claimDeferred(tx: Queryable, id: string): Promise<WebhookEvent | undefined> {
  const [row] = await tx
    .select()
    .from(webhookEvents)
    .where(and(eq(webhookEvents.id, id), eq(webhookEvents.state, 'deferred')))
    .limit(1)
    .for('update');
  return row;
}

/** Final: nothing applied. Returns false when the event was no longer deferred. */
export async function rejectWebhookEvent(
  db: Writer,
  change: { id: string; attempts: number; error: string; verifiedAt?: Date; now: Date },
): Promise<boolean> {
  const rows = await db
    .update(webhookEvents)
    .set({
      state: 'rejected',
      attempts: change.attempts,
      error: change.error,
      nextAttemptAt: null,
      processedAt: change.now,
      ...(change.verifiedAt ? { verifiedAt: change.verifiedAt } : {}),
    })
    .where(and(eq(webhookEvents.id, change.id), eq(webhookEvents.state, 'deferred')))
    .returning({ id: webhookEvents.id });
  return rows.length > 0;
}

export type ApplyOutcome = 'applied' | 'already_paid' | 'not_deferred';

/**
 * A verified payment, in one transaction: the event is claimed (still deferred), the
 * transaction marked paid, the workspace's entitlement replaced by the paid plan, a pending
 * cancellation cleared and the event marked processed. A transaction already paid (another
 * event for it) changes nothing but the event's state.
 */
export async function applyVerifiedPayment(
  db: Writer,
  payment: {
    eventId: string;
    attempts: number;
    transactionId: string;
    providerPaymentId: string;
    plan: string;
    periodStart: Date;
    periodEnd: Date;
    graceUntil: Date;
    now: Date;
  },
): Promise<ApplyOutcome> {
  return db.transaction(async (tx) => {
    const event = await claimDeferred(tx, payment.eventId);
    if (!event) return 'not_deferred';
    const [transaction] = await tx
      .select()
      .from(billingTransactions)
      .where(eq(billingTransactions.id, payment.transactionId))
      .limit(1)
      .for('update');
    if (!transaction) throw new DatabaseError('billing transaction vanished during a callback');
    const finish = (error: string | null) =>
      tx
        .update(webhookEvents)
        .set({
          state: 'processed',
          attempts: payment.attempts,
          error,
          nextAttemptAt: null,
          verifiedAt: payment.now,
          processedAt: payment.now,
        })
        .where(eq(webhookEvents.id, payment.eventId));
    if (transaction.state === 'paid') {
      await finish('transaction already paid');
      return 'already_paid';
    }
    await tx
      .update(billingTransactions)
      .set({
        state: 'paid',
        paidAt: payment.periodStart,
        providerPaymentId: payment.providerPaymentId || null,
        updatedAt: payment.now,
      })
      .where(eq(billingTransactions.id, transaction.id));
    await upsertEntitlement(tx as unknown as Database, {
      workspaceId: transaction.workspaceId,
      plan: payment.plan,
      status: 'active',
      periodStart: payment.periodStart,
      periodEnd: payment.periodEnd,
      entitlementSource: 'billing',
      graceUntil: payment.graceUntil,
    });
    await tx
      .update(billingAccounts)
      .set({ cancelAtPeriodEnd: false, updatedAt: payment.now })
      .where(eq(billingAccounts.workspaceId, transaction.workspaceId));
    await finish(null);
    return 'applied';
  });
}

/**
 * A verified failed payment: the event is processed, the transaction (unless paid) failed, and
 * a billing entitlement whose period already ended (a renewal that failed) becomes `past_due`:
 * it keeps its grace (`grace_until`), nothing else changes.
 */
export async function recordFailedPayment(
  db: Writer,
  failure: { eventId: string; attempts: number; transactionId: string; error: string; now: Date },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const event = await claimDeferred(tx, failure.eventId);
    if (!event) return false;
    const [transaction] = await tx
      .update(billingTransactions)
      .set({ state: 'failed', updatedAt: failure.now })
      .where(
        and(
          eq(billingTransactions.id, failure.transactionId),
          eq(billingTransactions.state, 'created'),
        ),
      )
      .returning();
    if (transaction) {
      await tx
        .update(workspaceEntitlements)
        .set({ status: 'past_due', updatedAt: failure.now })
        .where(
          and(
            eq(workspaceEntitlements.workspaceId, transaction.workspaceId),
            eq(workspaceEntitlements.entitlementSource, 'billing'),
            eq(workspaceEntitlements.status, 'active'),
            lte(workspaceEntitlements.periodEnd, failure.now),
          ),
        );
    }
    await tx
      .update(webhookEvents)
      .set({
        state: 'processed',
        attempts: failure.attempts,
        error: failure.error,
        nextAttemptAt: null,
        verifiedAt: failure.now,
        processedAt: failure.now,
      })
      .where(eq(webhookEvents.id, failure.eventId));
    return true;
  });
}

/** Deferred events due at `now` (all deferred ones with `force`), oldest first. */
export async function dueWebhookEvents(
  db: Reader,
  { now, limit, force }: { now: Date; limit: number; force: boolean },
): Promise<WebhookEvent[]> {
  const deferred = eq(webhookEvents.state, 'deferred');
  return db
    .select()
    .from(webhookEvents)
    .where(
      force
        ? deferred
        : and(
            deferred,
            or(isNull(webhookEvents.nextAttemptAt), lte(webhookEvents.nextAttemptAt, now)),
          ),
    )
    .orderBy(asc(webhookEvents.createdAt))
    .limit(limit);
}

export async function webhookHealth(db: Reader): Promise<{
  deferred: number;
  oldestDeferredAt: Date | null;
  lastVerifiedAt: Date | null;
}> {
  const [deferred] = await db
    .select({ n: count(), oldest: min(webhookEvents.createdAt) })
    .from(webhookEvents)
    .where(eq(webhookEvents.state, 'deferred'));
  const [verified] = await db.select({ last: max(webhookEvents.verifiedAt) }).from(webhookEvents);
  return {
    deferred: Number(deferred?.n ?? 0),
    oldestDeferredAt: deferred?.oldest ?? null,
    lastVerifiedAt: verified?.last ?? null,
  };
}

/** Whether a paid callback of the workspace still waits for the provider's verification. */
export async function hasUnverifiedPayment(db: Reader, workspaceId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: webhookEvents.id })
    .from(webhookEvents)
    .where(
      and(
        eq(webhookEvents.workspaceId, workspaceId),
        eq(webhookEvents.state, 'deferred'),
        eq(webhookEvents.paymentStatus, 'success'),
      ),
    )
    .limit(1);
  return row !== undefined;
}

export async function getCancelAtPeriodEnd(db: Reader, workspaceId: string): Promise<boolean> {
  const [row] = await db
    .select({ cancel: billingAccounts.cancelAtPeriodEnd })
    .from(billingAccounts)
    .where(eq(billingAccounts.workspaceId, workspaceId))
    .limit(1);
  return row?.cancel ?? false;
}

/**
 * Sets the cancellation flag and, on a billing entitlement, its grace: none while cancelled,
 * `graceUntil` again when undone. One transaction.
 */
export async function setCancelAtPeriodEnd(
  db: Writer,
  change: { workspaceId: string; cancel: boolean; graceUntil: (periodEnd: Date) => Date },
): Promise<void> {
  await db.transaction(async (tx) => {
    const now = new Date();
    await tx
      .insert(billingAccounts)
      .values({ workspaceId: change.workspaceId, cancelAtPeriodEnd: change.cancel, updatedAt: now })
      .onConflictDoUpdate({
        target: billingAccounts.workspaceId,
        set: { cancelAtPeriodEnd: change.cancel, updatedAt: now },
      });
    const [entitlement] = await tx
      .select()
      .from(workspaceEntitlements)
      .where(
        and(
          eq(workspaceEntitlements.workspaceId, change.workspaceId),
          eq(workspaceEntitlements.entitlementSource, 'billing'),
        ),
      )
      .limit(1)
      .for('update');
    if (!entitlement) return;
    await tx
      .update(workspaceEntitlements)
      .set({
        graceUntil: change.cancel ? null : change.graceUntil(entitlement.periodEnd),
        updatedAt: now,
      })
      .where(eq(workspaceEntitlements.workspaceId, change.workspaceId));
  });
}

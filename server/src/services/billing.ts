import { randomBytes } from 'node:crypto';
import {
  type BillingHealth,
  type BillingStatusResponse,
  type CheckoutRequest,
  type CheckoutResponse,
  legacyPlanLabel,
  PLANS,
  type PlanCode,
  type PlanStatus,
  type WebhookOutcome,
  type WebhookReprocessReport,
} from '@mnemo/contract';
import type { BillingConfig } from '../config.js';
import type { Database } from '../db/client.js';
import {
  applyVerifiedPayment,
  deferWebhookEvent,
  dueWebhookEvents,
  getBillingTransaction,
  getCancelAtPeriodEnd,
  hasUnverifiedPayment,
  insertBillingTransaction,
  recordFailedPayment,
  recordWebhookEvent,
  rejectWebhookEvent,
  setCancelAtPeriodEnd,
  setWebhookEventWorkspace,
  webhookHealth,
} from '../db/queries/billing.js';
import { getEntitlement } from '../db/queries/entitlements.js';
import { getWorkspaceById } from '../db/queries/workspaces.js';
import type { WebhookEvent } from '../db/schema/index.js';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createPaymentProvider } from '../providers/payments/index.js';
import {
  type IncomingCallback,
  type PaymentProvider,
  formatAmount,
  sameAmount,
} from '../providers/payments/types.js';
import {
  databaseEntitlements,
  type EffectivePlan,
  effectivePlan,
  type EntitlementLoader,
  entitlementState,
  type PlanService,
} from './plans.js';

const DAY_MS = 86_400_000;
/** Deferred callbacks are retried after 30 s, 1 min, 2 min, ... at most hourly. */
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 3_600_000;
/** After this many tries the scheduler stops; `POST /admin/webhooks/reprocess` still retries. */
export const MAX_AUTOMATIC_ATTEMPTS = 12;

export interface BillingServiceOptions {
  db: Database;
  /** Told to forget a workspace's cached plan after billing changed its entitlement. */
  plans: Pick<PlanService, 'resolve' | 'lastKnown' | 'invalidate'>;
  /** Undefined: billing is off; workspaces run on the internal grant. */
  provider: PaymentProvider | undefined;
  /** Days a paid plan keeps its tier after its period ends (not after a cancellation). */
  graceDays: number;
  logger?: Logger;
  now?: () => Date;
  /** Uniform in [0, 1): jitter of the retry schedule. */
  random?: () => number;
}

function billingOff(): ServiceError {
  return new ServiceError(
    'CONTROL_PLANE_ONLY',
    'Billing is not enabled on this installation (MNEMO_BILLING_PROVIDER=none): plans come from the internal grant',
  );
}

/** Our transaction ids: 24 characters of [a-z0-9] (PayU allows 25). */
function newTxnid(): string {
  return `mn${Date.now().toString(36)}${randomBytes(7).toString('hex')}`.slice(0, 24);
}

/**
 * Hosted checkout, payment callbacks, reprocessing and the billing status. The routes (REST)
 * and the scheduler call it; the provider is behind {@link PaymentProvider}.
 */
export class BillingService {
  private readonly db: Database;
  private readonly plans: BillingServiceOptions['plans'];
  readonly provider: PaymentProvider | undefined;
  private readonly graceDays: number;
  private readonly logger: Logger | undefined;
  private readonly now: () => Date;
  private readonly random: () => number;

  constructor(options: BillingServiceOptions) {
    this.db = options.db;
    this.plans = options.plans;
    this.provider = options.provider;
    this.graceDays = options.graceDays;
    this.logger = options.logger;
    this.now = options.now ?? (() => new Date());
    this.random = options.random ?? Math.random;
  }

  get enabled(): boolean {
    return this.provider !== undefined;
  }

  async status(workspaceId: string): Promise<BillingStatusResponse> {
    const now = this.now();
    let plan: EffectivePlan;
    try {
      plan = await this.plans.resolve(workspaceId, now);
    } catch (error) {
      // Degraded: a read, so answer from what is stored (or last read) instead of failing.
      if (!(error instanceof ServiceError)) throw error;
      plan =
        this.plans.lastKnown(workspaceId, now) ??
        effectivePlan(workspaceId, await getEntitlement(this.db, workspaceId), now);
    }
    const entitlement = await getEntitlement(this.db, workspaceId);
    const cancel = entitlement ? await getCancelAtPeriodEnd(this.db, workspaceId) : false;
    let planStatus: PlanStatus;
    if (!entitlement) planStatus = 'none';
    else if (entitlement.entitlementSource === 'internal_grant') planStatus = 'active';
    else {
      const state = entitlementState(entitlement, now);
      if (state === 'active') planStatus = 'active';
      else if (state === 'grace') planStatus = 'past_due';
      else planStatus = cancel || entitlement.status === 'canceled' ? 'canceled' : 'expired';
    }
    return {
      plan: legacyPlanLabel(plan.displayPlan),
      plan_status: planStatus,
      current_period_end:
        entitlement?.entitlementSource === 'billing' ? entitlement.periodEnd.toISOString() : null,
      cancel_at_period_end: entitlement?.entitlementSource === 'billing' ? cancel : false,
      effective_plan: plan.displayPlan,
    };
  }

  /** Records a transaction at the server's price of the plan and returns the provider's form. */
  async checkout(workspaceId: string, request: CheckoutRequest): Promise<CheckoutResponse> {
    const provider = this.provider;
    if (!provider) throw billingOff();
    const plan = PLANS[request.plan];
    const amount = formatAmount(plan.priceInr);
    const transaction = await insertBillingTransaction(this.db, {
      workspaceId,
      provider: provider.name,
      txnid: newTxnid(),
      plan: plan.code,
      amount,
      currency: 'INR',
    });
    const form = provider.checkoutForm({
      txnid: transaction.txnid,
      amount,
      productInfo: plan.code,
      firstname: request.firstname ?? 'Customer',
      email: request.email ?? '',
      ...(request.phone ? { phone: request.phone } : {}),
      workspaceId,
    });
    return { url: form.url, method: 'POST', fields: form.fields };
  }

  /** The callback's signature (H); throws when billing is off. */
  verifySignature(callback: IncomingCallback): boolean {
    if (!this.provider) throw billingOff();
    return this.provider.verifySignature(callback);
  }

  /**
   * A callback whose signature was verified: stored as an event (idempotent per event key),
   * then processed. A duplicate of a finished event changes nothing.
   */
  async receiveCallback(fields: Record<string, string>): Promise<WebhookOutcome> {
    const provider = this.provider;
    if (!provider) throw billingOff();
    const summary = provider.summarize(fields);
    if (!summary) {
      throw new ServiceError('BAD_REQUEST', 'The payment callback lacks required fields', {
        body: ['must carry txnid, status and amount'],
      });
    }
    const { hash: _signature, ...stored } = fields;
    const { event, inserted } = await recordWebhookEvent(this.db, {
      provider: provider.name,
      eventKey: summary.eventKey,
      txnid: summary.txnid,
      paymentStatus: summary.status,
      fields: stored,
      now: this.now(),
    });
    if (!inserted && event.state !== 'deferred') return 'duplicate';
    return this.process(event);
  }

  /** Reruns deferred events: the due ones (scheduler), or all of them (`force`, admin route). */
  async reprocess({
    limit = 100,
    force = false,
  }: { limit?: number; force?: boolean } = {}): Promise<WebhookReprocessReport> {
    const report: WebhookReprocessReport = { attempted: 0, processed: 0, deferred: 0, rejected: 0 };
    if (!this.provider) return report;
    const events = await dueWebhookEvents(this.db, { now: this.now(), limit, force });
    for (const event of events) {
      report.attempted += 1;
      let outcome: WebhookOutcome;
      try {
        outcome = await this.process(event);
      } catch (err) {
        this.logger?.error({ err, event_id: event.id }, 'payment callback reprocessing failed');
        outcome = 'deferred';
      }
      if (outcome === 'duplicate') report.processed += 1;
      else report[outcome] += 1;
    }
    return report;
  }

  async health(): Promise<BillingHealth> {
    const stats = await webhookHealth(this.db);
    const probe = this.provider ? await this.provider.probe() : undefined;
    return {
      provider: this.provider?.name ?? 'none',
      enabled: this.enabled,
      deferred_events: stats.deferred,
      oldest_deferred_at: stats.oldestDeferredAt?.toISOString() ?? null,
      last_successful_verification_at: stats.lastVerifiedAt?.toISOString() ?? null,
      provider_reachable: probe ? probe.reachable : null,
      probe_ms: probe ? probe.latencyMs : null,
      probe_error: probe?.error ?? null,
    };
  }

  /** Operator action: the paid plan ends at its period end without grace (or undo that). */
  async setCancelAtPeriodEnd(workspaceId: string, cancel: boolean): Promise<BillingStatusResponse> {
    if (!(await getWorkspaceById(this.db, workspaceId))) {
      throw new ServiceError('NOT_FOUND', 'No such workspace');
    }
    await setCancelAtPeriodEnd(this.db, {
      workspaceId,
      cancel,
      graceUntil: (periodEnd) => this.graceUntil(periodEnd),
    });
    this.plans.invalidate(workspaceId);
    return this.status(workspaceId);
  }

  private graceUntil(periodEnd: Date): Date {
    return new Date(periodEnd.getTime() + this.graceDays * DAY_MS);
  }

  /** Full jitter over half the step: retry n waits between 50 % and 100 % of 30 s * 2^(n-1). */
  private retryDelay(attempts: number): number {
    const step = Math.min(RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1), RETRY_MAX_MS);
    return step / 2 + this.random() * (step / 2);
  }

  /**
   * Checks a stored event against its transaction, asks the provider, then applies it in one
   * database transaction. Whatever runs it (callback, duplicate, scheduler, admin), an event is
   * applied at most once: applying claims it while it is still deferred.
   */
  private async process(event: WebhookEvent): Promise<WebhookOutcome> {
    const provider = this.provider;
    if (!provider) throw billingOff();
    const now = this.now();
    const attempts = event.attempts + 1;
    const reject = async (error: string, verifiedAt?: Date): Promise<WebhookOutcome> => {
      this.logger?.warn(
        { event_id: event.id, txnid: event.txnid, error },
        'payment callback rejected',
      );
      await rejectWebhookEvent(this.db, {
        id: event.id,
        attempts,
        error,
        now,
        ...(verifiedAt ? { verifiedAt } : {}),
      });
      return 'rejected';
    };
    const summary = provider.summarize(event.fields);
    if (!summary) return reject('callback lacks required fields');
    const transaction = await getBillingTransaction(this.db, provider.name, summary.txnid);
    if (!transaction) return reject(`unknown transaction ${summary.txnid}`);
    if (!event.workspaceId) {
      await setWebhookEventWorkspace(this.db, event.id, transaction.workspaceId);
    }
    // The signature proves the provider sent these fields; they must also be what we asked for.
    if (!sameAmount(summary.amount, transaction.amount)) {
      return reject(
        `amount ${summary.amount} differs from the transaction's ${transaction.amount}`,
      );
    }
    if (summary.productInfo !== transaction.plan) {
      return reject(
        `plan ${summary.productInfo} differs from the transaction's ${transaction.plan}`,
      );
    }
    if (summary.workspaceId !== transaction.workspaceId) {
      return reject("the callback's workspace differs from the transaction's");
    }

    const verification = await provider.verifyTransaction(summary.txnid);
    if (
      verification.kind === 'unavailable' ||
      (verification.kind === 'found' && verification.status === 'pending')
    ) {
      const reason =
        verification.kind === 'unavailable'
          ? verification.reason
          : 'the provider reports the payment pending';
      await deferWebhookEvent(this.db, {
        id: event.id,
        attempts,
        // After the last automatic try only an operator's reprocess runs it again.
        nextAttemptAt:
          attempts >= MAX_AUTOMATIC_ATTEMPTS
            ? new Date(8.64e15)
            : new Date(now.getTime() + this.retryDelay(attempts)),
        error: reason,
      });
      this.logger?.warn(
        { event_id: event.id, txnid: event.txnid, attempts, reason },
        'payment verification deferred',
      );
      // A paid callback waiting for verification degrades the workspace (billingEntitlements):
      // drop its cached plan so that shows at once.
      this.plans.invalidate(transaction.workspaceId);
      return 'deferred';
    }
    if (verification.kind === 'not_found') {
      return reject('the provider has no record of the transaction', now);
    }
    if (verification.status === 'failure') {
      await recordFailedPayment(this.db, {
        eventId: event.id,
        attempts,
        transactionId: transaction.id,
        error: `payment ${verification.rawStatus}`,
        now,
      });
      this.plans.invalidate(transaction.workspaceId);
      return 'processed';
    }
    if (!sameAmount(verification.amount, transaction.amount)) {
      return reject(
        `the provider reports ${verification.amount}, the transaction is ${transaction.amount}`,
        now,
      );
    }
    // Paid when the callback arrived (the event's time), not when a deferred retry succeeded.
    const plan = PLANS[transaction.plan as PlanCode];
    const periodStart = event.createdAt;
    const periodEnd = new Date(periodStart.getTime() + plan.periodDays * DAY_MS);
    const outcome = await applyVerifiedPayment(this.db, {
      eventId: event.id,
      attempts,
      transactionId: transaction.id,
      providerPaymentId: verification.providerPaymentId || summary.providerPaymentId,
      plan: plan.code,
      periodStart,
      periodEnd,
      graceUntil: this.graceUntil(periodEnd),
      now,
    });
    if (outcome === 'not_deferred') return 'duplicate';
    this.plans.invalidate(transaction.workspaceId);
    if (outcome === 'applied') {
      this.logger?.info(
        { workspace_id: transaction.workspaceId, plan: plan.code, txnid: transaction.txnid },
        'payment verified: plan applied',
      );
    }
    return 'processed';
  }
}

/**
 * A workspace with no plan in force has paid, but its payment waits for the provider's
 * verification: the entitlement is unverifiable, not lapsed (the plans answer it with
 * `ENTITLEMENT_DEGRADED`).
 */
export class PaymentUnverifiedError extends Error {
  constructor() {
    super('a payment of this workspace waits for the provider to verify it');
    this.name = 'PaymentUnverifiedError';
  }
}

/**
 * The entitlement loader of an install with billing: the database's, except that a workspace
 * with no plan in force whose payment callback still waits for the provider's verification is
 * "unverifiable" (the loader throws, the PlanService answers 503 ENTITLEMENT_DEGRADED to
 * writes) rather than lapsed (402 TRIAL_EXPIRED): it paid, we could not confirm it yet. The
 * verification succeeding (or being rejected) ends it.
 */
export function billingEntitlements(
  db: Database,
  internalGrantPlan: PlanCode | undefined,
): EntitlementLoader {
  const base = databaseEntitlements(db, internalGrantPlan);
  return async (workspaceId, now) => {
    const row = await base(workspaceId, now);
    if (!row || entitlementState(row, now) !== 'active') {
      if (await hasUnverifiedPayment(db, workspaceId)) {
        throw new PaymentUnverifiedError();
      }
    }
    return row;
  };
}

/** The billing service of a configuration: its provider (or none), over the shared plans. */
export function createBillingService(options: {
  config: BillingConfig;
  db: Database;
  plans: BillingServiceOptions['plans'];
  logger?: Logger;
}): BillingService {
  return new BillingService({
    db: options.db,
    plans: options.plans,
    provider: createPaymentProvider(options.config),
    graceDays: options.config.graceDays,
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

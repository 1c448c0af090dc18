import { z } from 'zod';
import { DisplayPlanCode, PlanCode } from './usage.js';

/**
 * The legacy plan labels of `plan` in the billing status (older clients read them). Mapping:
 * launch and build → `pro`; deploy, scale and scale_plus → `team`. Never use them for display
 * or quotas: `effective_plan` is the plan.
 */
export const LEGACY_PLAN_LABELS = ['pro', 'team'] as const;
export const LegacyPlanLabel = z.enum(LEGACY_PLAN_LABELS);
export type LegacyPlanLabel = z.infer<typeof LegacyPlanLabel>;

export function legacyPlanLabel(plan: DisplayPlanCode): LegacyPlanLabel {
  return plan === 'launch' || plan === 'build' ? 'pro' : 'team';
}

/**
 * - `active`: a plan is in force (paid, or the internal grant of an install without billing).
 * - `past_due`: the paid period ended without a renewal: grace (daily limits floored to launch's).
 * - `canceled`: ended at the period end after a cancellation; no grace.
 * - `expired`: the paid period and its grace are over.
 * - `none`: the workspace never had a plan (an install with billing, before the first payment).
 */
export const PLAN_STATUSES = ['active', 'past_due', 'canceled', 'expired', 'none'] as const;
export const PlanStatus = z.enum(PLAN_STATUSES);
export type PlanStatus = z.infer<typeof PlanStatus>;

/** `GET /v1/billing/status`: the spec's "Billing status response" (all five fields required). */
export const BillingStatusResponse = z.object({
  /** Legacy internal label (`pro` or `team`); do not use for display or quotas. */
  plan: LegacyPlanLabel,
  plan_status: PlanStatus,
  /** ISO 8601; null for an internal grant (it renews by itself) or when there is no plan. */
  current_period_end: z.string().datetime({ offset: true }).nullable(),
  /** True when the plan ends at `current_period_end` without grace. */
  cancel_at_period_end: z.boolean(),
  /** The plan to display and to meter quotas on. */
  effective_plan: DisplayPlanCode,
});
export type BillingStatusResponse = z.infer<typeof BillingStatusResponse>;

/** `POST /v1/billing/checkout`: the spec's "Billing checkout payload". */
export const CheckoutRequest = z.object({
  /** The plan to buy; its price comes from the server's plan table, never from the client. */
  plan: PlanCode,
  firstname: z.string().trim().min(1).max(60).optional(),
  email: z.string().trim().email().max(254).optional(),
  phone: z
    .string()
    .trim()
    .regex(/^\+?[0-9 -]{6,20}$/, 'must be a phone number')
    .optional(),
});
export type CheckoutRequest = z.infer<typeof CheckoutRequest>;

/** A form the browser submits (auto-submitted) to the provider's hosted checkout page. */
export const CheckoutResponse = z.object({
  url: z.string().url(),
  method: z.literal('POST'),
  fields: z.record(z.string(), z.string()),
});
export type CheckoutResponse = z.infer<typeof CheckoutResponse>;

/** The provider's callback: a form body of string fields (PayU: `txnid`, `status`, `hash`, ...). */
export const PaymentCallbackBody = z.record(z.string(), z.string());
export type PaymentCallbackBody = z.infer<typeof PaymentCallbackBody>;

/**
 * What happened to one callback:
 * - `processed`: verified with the provider and applied (or, for a failed payment, recorded);
 * - `deferred`: the provider could not be asked; it is retried by the scheduler or
 *   `POST /admin/webhooks/reprocess`;
 * - `rejected`: it does not match its transaction (amount, plan, workspace) or the provider's
 *   record: recorded, nothing changed;
 * - `duplicate`: this event was already handled; nothing changed.
 */
export const WEBHOOK_OUTCOMES = ['processed', 'deferred', 'rejected', 'duplicate'] as const;
export const WebhookOutcome = z.enum(WEBHOOK_OUTCOMES);
export type WebhookOutcome = z.infer<typeof WebhookOutcome>;

/** The answer to the provider: 200 whenever the signature was valid (it must not retry). */
export const PaymentCallbackResponse = z.object({
  received: z.literal(true),
  outcome: WebhookOutcome,
});
export type PaymentCallbackResponse = z.infer<typeof PaymentCallbackResponse>;

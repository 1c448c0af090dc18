import {
  contract,
  type BillingStatusResponse,
  type CheckoutRequest,
  type CheckoutResponse,
  type PaymentCallbackBody,
  type PaymentCallbackResponse,
} from '@mnemo/contract';
import type { AnonymousCaller, OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** GET /v1/billing/status */
export const getBillingStatus = defineOperation<
  undefined,
  BillingStatusResponse,
  Pick<OperationContext, 'billing'>
>('getBillingStatus', contract.billing.getBillingStatus, async (ctx, { caller }) => ({
  output: await ctx.billing.status(caller.workspaceId),
}));

/** POST /v1/billing/checkout: a hosted checkout for a plan. */
export const createCheckout = defineOperation<
  CheckoutRequest,
  CheckoutResponse,
  Pick<OperationContext, 'billing'>
>('createCheckout', contract.billing.createCheckout, async (ctx, { caller, input }) => ({
  output: await ctx.billing.checkout(caller.workspaceId, input),
}));

/**
 * POST /v1/billing/webhook: the provider's callback, its signature already verified by the door.
 * Answered 200 whatever the outcome, so that the provider does not retry.
 */
export const receivePaymentCallback = defineOperation<
  PaymentCallbackBody,
  PaymentCallbackResponse,
  Pick<OperationContext, 'billing'>,
  AnonymousCaller
>('receivePaymentCallback', contract.billing.receivePaymentCallback, async (ctx, { input }) => ({
  output: { received: true, outcome: await ctx.billing.receiveCallback(input) },
}));

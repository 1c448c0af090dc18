import {
  contract,
  type BillingStatusResponse,
  type CheckoutRequest,
  type CheckoutResponse,
} from '@mnemo/contract';
import type { OperationContext } from './context.js';
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

import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { paymentCallbackAuth } from '../http/payment-callback.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import { ServiceError } from '../errors.js';
import type { Operations } from '../operations/index.js';
import type { BillingService } from '../services/billing.js';

const s = initServer();

/**
 * Billing routes. `middleware` is the tenant chain (API key, limits); the callback passes the
 * API-key check (its auth is `payment_callback`) and is verified by its own middleware.
 */
export function mountBillingRoutes(
  target: IRouter,
  table: RouteTable,
  {
    operations,
    billing,
    maxBodyBytes,
  }: {
    operations: Pick<Operations, 'getBillingStatus' | 'createCheckout'>;
    /** The payment callback's own verification and receipt (the provider calls it, no tenant). */
    billing: Pick<BillingService, 'verifySignature' | 'receiveCallback'>;
    maxBodyBytes: number;
  },
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.billing, {
    getBillingStatus: async ({ req }) => ({
      status: 200,
      body: await operations.getBillingStatus(callerOf(req, 'rest'), undefined),
    }),
    createCheckout: async ({ req, body }) => ({
      status: 200,
      body: await operations.createCheckout(callerOf(req, 'rest'), body),
    }),
    receivePaymentCallback: {
      middleware: paymentCallbackAuth({
        verify: (callback) => billing.verifySignature(callback),
        maxBytes: maxBodyBytes,
      }),
      handler: async ({ body }) => ({
        status: 200,
        body: { received: true as const, outcome: await billing.receiveCallback(body) },
      }),
    },
    openBillingPortal: async () => {
      throw new ServiceError(
        'GONE',
        'The billing portal is retired: use POST /v1/billing/checkout and GET /v1/billing/status',
      );
    },
  });
  mountContract(target, table, contract.billing, implementation, middleware);
}

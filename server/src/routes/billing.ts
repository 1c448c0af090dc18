import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { requireAuth } from '../http/auth.js';
import { mountContract } from '../http/mount.js';
import { paymentCallbackAuth } from '../http/payment-callback.js';
import type { RouteTable } from '../http/route-table.js';
import { ServiceError } from '../errors.js';
import type { BillingService } from '../services/billing.js';

const s = initServer();

/**
 * Billing routes. `middleware` is the tenant chain (API key, limits); the callback passes the
 * API-key check (its auth is `payment_callback`) and is verified by its own middleware.
 */
export function mountBillingRoutes(
  target: IRouter,
  table: RouteTable,
  { billing, maxBodyBytes }: { billing: BillingService; maxBodyBytes: number },
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.billing, {
    getBillingStatus: async ({ req }) => ({
      status: 200,
      body: await billing.status(requireAuth(req).workspaceId),
    }),
    createCheckout: async ({ req, body }) => ({
      status: 200,
      body: await billing.checkout(requireAuth(req).workspaceId, body),
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

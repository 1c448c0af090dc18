import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { paymentCallbackAuth } from '../http/payment-callback.js';
import { anonymousCallerOf, callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import { ServiceError } from '../errors.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

/**
 * Billing routes. `middleware` is the tenant chain (API key, limits); the callback passes the
 * API-key check (its auth is `payment_callback`) and is verified by its own middleware, the
 * door's check of the provider's signature.
 */
export function mountBillingRoutes(
  target: IRouter,
  table: RouteTable,
  {
    operations,
    verifyCallback,
    maxBodyBytes,
  }: {
    operations: Pick<Operations, 'getBillingStatus' | 'createCheckout' | 'receivePaymentCallback'>;
    /** Whether the provider signed the callback (the provider calls it, no tenant). */
    verifyCallback: Parameters<typeof paymentCallbackAuth>[0]['verify'];
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
      middleware: paymentCallbackAuth({ verify: verifyCallback, maxBytes: maxBodyBytes }),
      handler: async ({ req, body }) => ({
        status: 200,
        body: await operations.receivePaymentCallback(
          anonymousCallerOf(req, 'payment_callback'),
          body,
        ),
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

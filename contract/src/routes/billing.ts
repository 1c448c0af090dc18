import { initContract } from '@ts-rest/core';
import { ErrorEnvelope } from '../schemas/common.js';
import {
  BillingStatusResponse,
  CheckoutRequest,
  CheckoutResponse,
  PaymentCallbackBody,
  PaymentCallbackResponse,
} from '../schemas/billing.js';
import { PAYMENT_CALLBACK, TENANT } from './auth.js';

const c = initContract();

/** Billing: status, hosted checkout, the provider's payment callback, the legacy portal. */
export const billingContract = c.router(
  {
    getBillingStatus: {
      method: 'GET',
      path: '/status',
      responses: { 200: BillingStatusResponse },
      metadata: TENANT,
      summary: "The workspace's plan, its status and period end",
    },
    createCheckout: {
      method: 'POST',
      path: '/checkout',
      body: CheckoutRequest,
      responses: { 200: CheckoutResponse },
      metadata: TENANT,
      summary: 'Records a transaction and returns the hosted checkout form to auto-submit',
    },
    receivePaymentCallback: {
      method: 'POST',
      path: '/webhook',
      contentType: 'application/x-www-form-urlencoded',
      body: PaymentCallbackBody,
      responses: { 200: PaymentCallbackResponse },
      metadata: PAYMENT_CALLBACK,
      summary: "The payment provider's signed callback (form body); not called by clients",
    },
    openBillingPortal: {
      method: 'POST',
      path: '/portal',
      body: c.noBody(),
      responses: { 410: ErrorEnvelope },
      metadata: TENANT,
      summary: 'Legacy billing portal: always 410 GONE (checkout replaces it)',
      deprecated: true,
    },
  },
  { pathPrefix: '/v1/billing' },
);

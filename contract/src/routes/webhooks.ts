import { initContract } from '@ts-rest/core';
import { ErrorEnvelope } from '../schemas/common.js';
import {
  CreateWebhookEndpointPayload,
  DeleteWebhookEndpointResponse,
  UpdateWebhookEndpointPayload,
  WebhookDeliveriesQuery,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookDeliveryParams,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointParams,
  WebhookEndpointWithSecret,
} from '../schemas/webhooks.js';
import { TENANT_OPERATOR } from './auth.js';

const c = initContract();

/**
 * Signed lifecycle webhooks (operator routes, K or S): a workspace's endpoints and their delivery
 * log. See docs/webhooks.md.
 */
export const webhooksContract = c.router(
  {
    createWebhookEndpoint: {
      method: 'POST',
      path: '/webhooks/endpoints',
      body: CreateWebhookEndpointPayload,
      responses: { 201: WebhookEndpointWithSecret, 409: ErrorEnvelope },
      metadata: TENANT_OPERATOR,
      summary: 'Register an endpoint; its signing secret is shown this once',
    },
    listWebhookEndpoints: {
      method: 'GET',
      path: '/webhooks/endpoints',
      responses: { 200: WebhookEndpointList },
      metadata: TENANT_OPERATOR,
      summary: "The workspace's endpoints (without secrets)",
    },
    getWebhookEndpoint: {
      method: 'GET',
      path: '/webhooks/endpoints/:id',
      pathParams: WebhookEndpointParams,
      responses: { 200: WebhookEndpoint },
      metadata: TENANT_OPERATOR,
      summary: 'One endpoint (without its secret)',
    },
    updateWebhookEndpoint: {
      method: 'PATCH',
      path: '/webhooks/endpoints/:id',
      pathParams: WebhookEndpointParams,
      body: UpdateWebhookEndpointPayload,
      responses: { 200: WebhookEndpoint },
      metadata: TENANT_OPERATOR,
      summary: 'Change the URL, event types or description, or disable and enable it',
    },
    deleteWebhookEndpoint: {
      method: 'DELETE',
      path: '/webhooks/endpoints/:id',
      pathParams: WebhookEndpointParams,
      body: c.noBody(),
      responses: { 200: DeleteWebhookEndpointResponse },
      metadata: TENANT_OPERATOR,
      summary: 'Delete an endpoint and its delivery log',
    },
    rotateWebhookSecret: {
      method: 'POST',
      path: '/webhooks/endpoints/:id/rotate-secret',
      pathParams: WebhookEndpointParams,
      body: c.noBody(),
      responses: { 200: WebhookEndpointWithSecret },
      metadata: TENANT_OPERATOR,
      summary: 'A new signing secret, shown this once; the old one also signs for 24 hours',
    },
    listWebhookDeliveries: {
      method: 'GET',
      path: '/webhooks/endpoints/:id/deliveries',
      pathParams: WebhookEndpointParams,
      query: WebhookDeliveriesQuery,
      responses: { 200: WebhookDeliveryPage },
      metadata: TENANT_OPERATOR,
      summary: "The endpoint's delivery log, newest first",
    },
    replayWebhookDelivery: {
      method: 'POST',
      path: '/webhooks/endpoints/:id/deliveries/:delivery_id/replay',
      pathParams: WebhookDeliveryParams,
      body: c.noBody(),
      responses: { 200: WebhookDelivery, 409: ErrorEnvelope },
      metadata: TENANT_OPERATOR,
      summary: 'Send a finished delivery again (same webhook-id), as soon as the dispatcher can',
    },
  },
  { pathPrefix: '/v1' },
);

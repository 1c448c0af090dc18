import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

type WebhookOperations = Pick<
  Operations,
  | 'createWebhookEndpoint'
  | 'listWebhookEndpoints'
  | 'getWebhookEndpoint'
  | 'updateWebhookEndpoint'
  | 'deleteWebhookEndpoint'
  | 'rotateWebhookSecret'
  | 'listWebhookDeliveries'
  | 'replayWebhookDelivery'
>;

export function mountWebhookRoutes(
  target: IRouter,
  table: RouteTable,
  operations: WebhookOperations,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.webhooks, {
    createWebhookEndpoint: async ({ req, body }) => ({
      status: 201,
      body: await operations.createWebhookEndpoint(callerOf(req, 'rest'), body),
    }),
    listWebhookEndpoints: async ({ req }) => ({
      status: 200,
      body: await operations.listWebhookEndpoints(callerOf(req, 'rest'), {}),
    }),
    getWebhookEndpoint: async ({ req, params }) => ({
      status: 200,
      body: await operations.getWebhookEndpoint(callerOf(req, 'rest'), { id: params.id }),
    }),
    updateWebhookEndpoint: async ({ req, params, body }) => ({
      status: 200,
      body: await operations.updateWebhookEndpoint(callerOf(req, 'rest'), {
        id: params.id,
        patch: body,
      }),
    }),
    deleteWebhookEndpoint: async ({ req, params }) => ({
      status: 200,
      body: await operations.deleteWebhookEndpoint(callerOf(req, 'rest'), { id: params.id }),
    }),
    rotateWebhookSecret: async ({ req, params }) => ({
      status: 200,
      body: await operations.rotateWebhookSecret(callerOf(req, 'rest'), { id: params.id }),
    }),
    listWebhookDeliveries: async ({ req, params, query }) => ({
      status: 200,
      body: await operations.listWebhookDeliveries(callerOf(req, 'rest'), {
        id: params.id,
        query,
      }),
    }),
    replayWebhookDelivery: async ({ req, params }) => ({
      status: 200,
      body: await operations.replayWebhookDelivery(callerOf(req, 'rest'), {
        id: params.id,
        deliveryId: params.delivery_id,
      }),
    }),
  });
  mountContract(target, table, contract.webhooks, implementation, middleware);
}

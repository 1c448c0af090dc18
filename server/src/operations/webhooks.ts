import {
  contract,
  type CreateWebhookEndpointPayload,
  type DeleteWebhookEndpointResponse,
  type UpdateWebhookEndpointPayload,
  type WebhookDeliveriesQuery,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookEndpoint,
  type WebhookEndpointList,
  type WebhookEndpointWithSecret,
} from '@mnemo/contract';
import {
  changeEndpoint,
  createEndpoint,
  endpointDeliveries,
  getEndpoint,
  listWorkspaceEndpoints,
  removeEndpoint,
  replayDelivery,
  rotateSecret,
  type WebhookEndpointPorts,
} from '../services/webhooks/endpoints.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

type EndpointContext = Pick<
  OperationContext,
  'reader' | 'writer' | 'webhookSecrets' | 'webhooksAllowPrivate'
>;

function endpointPorts(ctx: EndpointContext): WebhookEndpointPorts {
  return {
    reader: ctx.reader,
    writer: ctx.writer,
    secrets: ctx.webhookSecrets,
    allowPrivate: ctx.webhooksAllowPrivate,
  };
}

/** POST /v1/webhooks/endpoints */
export const createWebhookEndpoint = defineOperation<
  CreateWebhookEndpointPayload,
  WebhookEndpointWithSecret,
  EndpointContext
>(
  'createWebhookEndpoint',
  contract.webhooks.createWebhookEndpoint,
  async (ctx, { caller, input }) => ({
    output: await createEndpoint(endpointPorts(ctx), caller.workspaceId, input),
  }),
);

/** GET /v1/webhooks/endpoints */
export const listWebhookEndpoints = defineOperation<
  Record<string, never>,
  WebhookEndpointList,
  Pick<OperationContext, 'reader'>
>('listWebhookEndpoints', contract.webhooks.listWebhookEndpoints, async (ctx, { caller }) => ({
  output: await listWorkspaceEndpoints(ctx.reader, caller.workspaceId),
}));

/** GET /v1/webhooks/endpoints/:id */
export const getWebhookEndpoint = defineOperation<
  { id: string },
  WebhookEndpoint,
  Pick<OperationContext, 'reader'>
>('getWebhookEndpoint', contract.webhooks.getWebhookEndpoint, async (ctx, { caller, input }) => ({
  output: await getEndpoint(ctx.reader, caller.workspaceId, input.id),
}));

/** PATCH /v1/webhooks/endpoints/:id */
export const updateWebhookEndpoint = defineOperation<
  { id: string; patch: UpdateWebhookEndpointPayload },
  WebhookEndpoint,
  EndpointContext
>(
  'updateWebhookEndpoint',
  contract.webhooks.updateWebhookEndpoint,
  async (ctx, { caller, input }) => ({
    output: await changeEndpoint(endpointPorts(ctx), caller.workspaceId, input.id, input.patch),
  }),
);

/** DELETE /v1/webhooks/endpoints/:id */
export const deleteWebhookEndpoint = defineOperation<
  { id: string },
  DeleteWebhookEndpointResponse,
  Pick<OperationContext, 'writer'>
>(
  'deleteWebhookEndpoint',
  contract.webhooks.deleteWebhookEndpoint,
  async (ctx, { caller, input }) => ({
    output: await removeEndpoint(ctx.writer, caller.workspaceId, input.id),
  }),
);

/** POST /v1/webhooks/endpoints/:id/rotate-secret */
export const rotateWebhookSecret = defineOperation<
  { id: string },
  WebhookEndpointWithSecret,
  EndpointContext
>('rotateWebhookSecret', contract.webhooks.rotateWebhookSecret, async (ctx, { caller, input }) => ({
  output: await rotateSecret(endpointPorts(ctx), caller.workspaceId, input.id),
}));

/** GET /v1/webhooks/endpoints/:id/deliveries */
export const listWebhookDeliveries = defineOperation<
  { id: string; query: WebhookDeliveriesQuery },
  WebhookDeliveryPage,
  Pick<OperationContext, 'reader'>
>(
  'listWebhookDeliveries',
  contract.webhooks.listWebhookDeliveries,
  async (ctx, { caller, input }) => ({
    output: await endpointDeliveries(ctx.reader, caller.workspaceId, input.id, input.query),
  }),
);

/** POST /v1/webhooks/endpoints/:id/deliveries/:delivery_id/replay */
export const replayWebhookDelivery = defineOperation<
  { id: string; deliveryId: string },
  WebhookDelivery,
  Pick<OperationContext, 'writer'>
>(
  'replayWebhookDelivery',
  contract.webhooks.replayWebhookDelivery,
  async (ctx, { caller, input }) => ({
    output: await replayDelivery(ctx.writer, caller.workspaceId, input.id, input.deliveryId),
  }),
);

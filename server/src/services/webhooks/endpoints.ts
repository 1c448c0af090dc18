import {
  WEBHOOK_DELIVERY_PAGE_SIZE,
  WEBHOOK_LIMITS,
  type CreateWebhookEndpointPayload,
  type UpdateWebhookEndpointPayload,
  type WebhookDelivery,
  type WebhookDeliveriesQuery,
  type WebhookDeliveryPage,
  type WebhookEndpoint,
  type WebhookEndpointList,
  type WebhookEndpointWithSecret,
  type WebhookEventType,
} from '@mnemo/contract';
import type { Reader, Writer } from '../../db/client.js';
import {
  countEndpoints,
  deleteEndpoint,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  requeueDelivery,
  updateEndpoint,
} from '../../db/queries/webhooks.js';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/schema/index.js';
import { ServiceError } from '../../errors.js';
import { isUuid } from '../../ids.js';
import { endpointUrlProblem } from './addresses.js';
import { newSigningSecret, type SecretBox } from './secrets.js';

/** How long the secret before a rotation keeps signing, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** What the endpoint services need: storage, the secret box and the SSRF setting. */
export interface WebhookEndpointPorts {
  reader: Reader;
  writer: Writer;
  secrets: SecretBox;
  allowPrivate: boolean;
}

function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: row.eventTypes as WebhookEventType[],
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function toDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpoint_id: row.endpointId,
    event_id: row.eventId,
    event_type: row.eventType as WebhookEventType,
    memory_id: row.memoryId,
    status: row.status,
    attempts: row.attempts,
    response_status: row.responseStatus,
    last_error: row.lastError,
    last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    payload: row.payload,
  };
}

const endpointNotFound = (id: string) =>
  new ServiceError('NOT_FOUND', `Webhook endpoint ${id} not found`);

/** The workspace's endpoint; another workspace's id (or no uuid at all) is not found either. */
async function ownEndpoint(
  db: Reader,
  workspaceId: string,
  id: string,
): Promise<WebhookEndpointRow> {
  const row = isUuid(id) ? await findEndpoint(db, workspaceId, id) : undefined;
  if (!row) throw endpointNotFound(id);
  return row;
}

async function checkUrl(url: string, allowPrivate: boolean): Promise<void> {
  const problem = await endpointUrlProblem(url, { allowPrivate });
  if (problem) {
    throw new ServiceError('BAD_REQUEST', `Webhook URL refused: ${problem}`, { url: [problem] });
  }
}

/** POST /v1/webhooks/endpoints: the endpoint and its secret, shown this once. */
export async function createEndpoint(
  ports: WebhookEndpointPorts,
  workspaceId: string,
  payload: CreateWebhookEndpointPayload,
): Promise<WebhookEndpointWithSecret> {
  await checkUrl(payload.url, ports.allowPrivate);
  if ((await countEndpoints(ports.reader, workspaceId)) >= WEBHOOK_LIMITS.endpointsPerWorkspace) {
    throw new ServiceError(
      'CONFLICT',
      `A workspace has at most ${WEBHOOK_LIMITS.endpointsPerWorkspace} webhook endpoints`,
    );
  }
  const secret = newSigningSecret();
  const row = await insertEndpoint(ports.writer, {
    workspaceId,
    url: payload.url,
    description: payload.description ?? '',
    eventTypes: payload.event_types ?? [],
    secretCiphertext: ports.secrets.seal(secret),
  });
  return { endpoint: toEndpoint(row), secret };
}

export async function listWorkspaceEndpoints(
  db: Reader,
  workspaceId: string,
): Promise<WebhookEndpointList> {
  return { results: (await listEndpoints(db, workspaceId)).map(toEndpoint) };
}

export async function getEndpoint(
  db: Reader,
  workspaceId: string,
  id: string,
): Promise<WebhookEndpoint> {
  return toEndpoint(await ownEndpoint(db, workspaceId, id));
}

export async function changeEndpoint(
  ports: WebhookEndpointPorts,
  workspaceId: string,
  id: string,
  patch: UpdateWebhookEndpointPayload,
): Promise<WebhookEndpoint> {
  if (!isUuid(id)) throw endpointNotFound(id);
  if (patch.url !== undefined) await checkUrl(patch.url, ports.allowPrivate);
  const row = await updateEndpoint(ports.writer, workspaceId, id, {
    url: patch.url,
    description: patch.description,
    eventTypes: patch.event_types,
    enabled: patch.enabled,
  });
  if (!row) throw endpointNotFound(id);
  return toEndpoint(row);
}

export async function removeEndpoint(
  db: Writer,
  workspaceId: string,
  id: string,
): Promise<{ deleted: true }> {
  if (!isUuid(id) || !(await deleteEndpoint(db, workspaceId, id))) throw endpointNotFound(id);
  return { deleted: true };
}

/** A new secret, shown once; the current one keeps signing for {@link PREVIOUS_SECRET_GRACE_MS}. */
export async function rotateSecret(
  ports: WebhookEndpointPorts,
  workspaceId: string,
  id: string,
): Promise<WebhookEndpointWithSecret> {
  return ports.writer.transaction(async (tx) => {
    const current = await ownEndpoint(tx, workspaceId, id);
    const secret = newSigningSecret();
    const row = await updateEndpoint(tx, workspaceId, id, {
      secretCiphertext: ports.secrets.seal(secret),
      previousSecretCiphertext: current.secretCiphertext,
      previousSecretExpiresAt: new Date(Date.now() + PREVIOUS_SECRET_GRACE_MS),
    });
    if (!row) throw endpointNotFound(id);
    return { endpoint: toEndpoint(row), secret };
  });
}

export async function endpointDeliveries(
  db: Reader,
  workspaceId: string,
  id: string,
  query: WebhookDeliveriesQuery,
): Promise<WebhookDeliveryPage> {
  const endpoint = await ownEndpoint(db, workspaceId, id);
  const page = query.page ?? 1;
  const pageSize = query.page_size ?? WEBHOOK_DELIVERY_PAGE_SIZE.default;
  const { rows, total } = await listDeliveries(db, endpoint.id, {
    status: query.status,
    limit: pageSize,
    offset: (page - 1) * pageSize,
  });
  return {
    results: rows.map(toDelivery),
    page,
    page_size: pageSize,
    total,
    has_more: page * pageSize < total,
  };
}

/** Sends a finished delivery again: due now, same `webhook-id` (the event's id). */
export async function replayDelivery(
  db: Writer,
  workspaceId: string,
  id: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const endpoint = await ownEndpoint(db, workspaceId, id);
  const notFound = new ServiceError('NOT_FOUND', `Webhook delivery ${deliveryId} not found`);
  if (!isUuid(deliveryId)) throw notFound;
  const requeued = await requeueDelivery(db, endpoint.id, deliveryId);
  if (requeued) return toDelivery(requeued);
  const existing = await findDelivery(db, endpoint.id, deliveryId);
  if (!existing) throw notFound;
  throw new ServiceError(
    'CONFLICT',
    `Webhook delivery ${deliveryId} is ${existing.status}: only a finished delivery is replayed`,
  );
}

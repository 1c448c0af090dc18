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
import type { RequestOptions, RestTransport } from './transport/rest.js';

/**
 * Signed lifecycle webhooks (operator routes): `client.webhooks.create / list / get / update /
 * remove / rotateSecret / deliveries / replay`. See docs/webhooks.md for the events and how to
 * verify a signature.
 */
export class Webhooks {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Registers an endpoint (`POST /v1/webhooks/endpoints`) and returns its signing secret, shown
   * this once. Not retried unless `options.maxRetries` says so: a retry after a lost answer
   * would register a second endpoint.
   *
   * @example
   * ```ts
   * const { endpoint, secret } = await client.webhooks.create({
   *   url: 'https://example.com/mnemo-hook',
   *   event_types: ['memory.created', 'memory.deleted'],
   * });
   * ```
   */
  async create(
    params: CreateWebhookEndpointPayload,
    options?: RequestOptions,
  ): Promise<WebhookEndpointWithSecret> {
    const { data } = await this.rest.request<WebhookEndpointWithSecret>(
      contract.webhooks.createWebhookEndpoint,
      { maxRetries: 0, ...options, body: params },
    );
    return data;
  }

  /** The workspace's endpoints, oldest first, without secrets (`GET /v1/webhooks/endpoints`). */
  async list(options?: RequestOptions): Promise<WebhookEndpointList> {
    const { data } = await this.rest.request<WebhookEndpointList>(
      contract.webhooks.listWebhookEndpoints,
      { ...options },
    );
    return data;
  }

  /** One endpoint (`GET /v1/webhooks/endpoints/{id}`); `NotFoundError` when there is none. */
  async get(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    const { data } = await this.rest.request<WebhookEndpoint>(
      contract.webhooks.getWebhookEndpoint,
      { ...options, params: { id } },
    );
    return data;
  }

  /**
   * Changes an endpoint (`PATCH /v1/webhooks/endpoints/{id}`): its URL, event types or
   * description, or `enabled: false` to pause it.
   *
   * @example
   * ```ts
   * await client.webhooks.update(endpointId, { enabled: false });
   * ```
   */
  async update(
    id: string,
    patch: UpdateWebhookEndpointPayload,
    options?: RequestOptions,
  ): Promise<WebhookEndpoint> {
    const { data } = await this.rest.request<WebhookEndpoint>(
      contract.webhooks.updateWebhookEndpoint,
      { ...options, params: { id }, body: patch },
    );
    return data;
  }

  /** Deletes an endpoint and its delivery log (`DELETE /v1/webhooks/endpoints/{id}`). */
  async remove(id: string, options?: RequestOptions): Promise<DeleteWebhookEndpointResponse> {
    const { data } = await this.rest.request<DeleteWebhookEndpointResponse>(
      contract.webhooks.deleteWebhookEndpoint,
      { ...options, params: { id } },
    );
    return data;
  }

  /**
   * A new signing secret, shown this once (`POST /v1/webhooks/endpoints/{id}/rotate-secret`); the
   * previous one keeps signing for 24 hours. Not retried unless `options.maxRetries` says so: a
   * retry after a lost answer would rotate again and lose the secret shown.
   */
  async rotateSecret(id: string, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    const { data } = await this.rest.request<WebhookEndpointWithSecret>(
      contract.webhooks.rotateWebhookSecret,
      { maxRetries: 0, ...options, params: { id } },
    );
    return data;
  }

  /**
   * The endpoint's delivery log, newest first (`GET /v1/webhooks/endpoints/{id}/deliveries`).
   *
   * @example
   * ```ts
   * const { results } = await client.webhooks.deliveries(endpointId, { status: 'failed' });
   * ```
   */
  async deliveries(
    id: string,
    query: WebhookDeliveriesQuery = {},
    options?: RequestOptions,
  ): Promise<WebhookDeliveryPage> {
    const { data } = await this.rest.request<WebhookDeliveryPage>(
      contract.webhooks.listWebhookDeliveries,
      { ...options, params: { id }, query },
    );
    return data;
  }

  /**
   * Sends a finished delivery again with the same `webhook-id`
   * (`POST /v1/webhooks/endpoints/{id}/deliveries/{delivery_id}/replay`); `ConflictError` while
   * it is still pending.
   */
  async replay(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    const { data } = await this.rest.request<WebhookDelivery>(
      contract.webhooks.replayWebhookDelivery,
      { ...options, params: { id, delivery_id: deliveryId } },
    );
    return data;
  }
}

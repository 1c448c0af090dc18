import { z } from 'zod';
import { boundedText, PageFields, PgString } from './common.js';
import { INPUT_BOUNDS } from './limits.js';

/**
 * What a webhook endpoint can be told about (docs/webhooks.md). Each maps the outbox's events:
 * an extracted child is `memory.created` too (its rule names the extractor), and an archived
 * memory is `memory.expired` when its expiry archived it, `memory.archived` when retention did.
 * `owner.erased` tells that an owner's data was erased (its receipt, no content).
 */
export const WEBHOOK_EVENT_TYPES = [
  'memory.created',
  'memory.deduped',
  'memory.superseded',
  'memory.merged',
  'memory.expired',
  'memory.archived',
  'memory.deleted',
  'search.feedback',
  'owner.erased',
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/** Bounds of webhook endpoints. */
export const WEBHOOK_LIMITS = {
  /** Characters of an endpoint URL. */
  urlLength: 2048,
  /** Characters of a description. */
  descriptionLength: 500,
  /** Endpoints one workspace may have. */
  endpointsPerWorkspace: 20,
} as const;

/** Rows per page of the delivery log: default and bounds. */
export const WEBHOOK_DELIVERY_PAGE_SIZE = { min: 1, max: 100, default: 50 } as const;

/**
 * Where deliveries go: http or https, no credentials in it. The server also resolves the host
 * and refuses loopback, private, link-local and metadata addresses unless its operator allows
 * them (`MNEMO_WEBHOOKS_ALLOW_PRIVATE`).
 */
export const WebhookUrl = PgString.pipe(
  z
    .string()
    .max(WEBHOOK_LIMITS.urlLength)
    .url()
    .refine((value) => /^https?:\/\//i.test(value), 'must be an http or https URL'),
);

/** The event types an endpoint receives; empty: every type. */
const EventTypeFilter = z
  .array(WebhookEventType)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, 'must not repeat an event type');

export const CreateWebhookEndpointPayload = z
  .object({
    url: WebhookUrl,
    /** Default: every event type. */
    event_types: EventTypeFilter.optional(),
    description: boundedText({ min: 0, max: WEBHOOK_LIMITS.descriptionLength }).optional(),
  })
  .strict();
export type CreateWebhookEndpointPayload = z.infer<typeof CreateWebhookEndpointPayload>;

export const UpdateWebhookEndpointPayload = z
  .object({
    url: WebhookUrl.optional(),
    event_types: EventTypeFilter.optional(),
    description: boundedText({ min: 0, max: WEBHOOK_LIMITS.descriptionLength }).optional(),
    /** False: nothing is delivered (events still queue and go out once it is enabled again). */
    enabled: z.boolean().optional(),
  })
  .strict()
  .refine((patch) => Object.keys(patch).length > 0, 'change at least one field');
export type UpdateWebhookEndpointPayload = z.infer<typeof UpdateWebhookEndpointPayload>;

/** An endpoint as the API shows it: never its secret (shown once, on create and rotate). */
export const WebhookEndpoint = z.object({
  id: z.string().uuid(),
  url: z.string(),
  description: z.string(),
  /** Empty: every event type. */
  event_types: z.array(WebhookEventType),
  enabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = z.object({
  endpoint: WebhookEndpoint,
  /**
   * The signing secret (`whsec_` + base64), shown this once. After a rotation the previous
   * secret also signs (a second signature) for 24 hours, so receivers can switch over.
   */
  secret: z.string(),
});
export type WebhookEndpointWithSecret = z.infer<typeof WebhookEndpointWithSecret>;

export const WebhookEndpointList = z.object({
  /** Oldest first. */
  results: z.array(WebhookEndpoint),
});
export type WebhookEndpointList = z.infer<typeof WebhookEndpointList>;

/** An endpoint id in the path; any other string is simply not found. */
export const WebhookEndpointParams = z.object({ id: boundedText(INPUT_BOUNDS.memoryId) });
export const WebhookDeliveryParams = z.object({
  id: boundedText(INPUT_BOUNDS.memoryId),
  delivery_id: boundedText(INPUT_BOUNDS.memoryId),
});

/**
 * - `pending`: waiting for its next attempt (or for an earlier event of the same memory);
 * - `sending`: an attempt in flight;
 * - `succeeded`: the endpoint answered 2xx;
 * - `failed`: every attempt failed; replay sends it again.
 */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'sending', 'succeeded', 'failed'] as const;
export const WebhookDeliveryStatus = z.enum(WEBHOOK_DELIVERY_STATUSES);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;

const queryInt = (min: number, max: number) =>
  z.coerce.number({ invalid_type_error: 'must be an integer' }).int().min(min).max(max);

export const WebhookDeliveriesQuery = z
  .object({
    page: queryInt(INPUT_BOUNDS.page.min, INPUT_BOUNDS.page.max).optional(),
    page_size: queryInt(WEBHOOK_DELIVERY_PAGE_SIZE.min, WEBHOOK_DELIVERY_PAGE_SIZE.max).optional(),
    status: WebhookDeliveryStatus.optional(),
  })
  .strict();
export type WebhookDeliveriesQuery = z.infer<typeof WebhookDeliveriesQuery>;

/** One event's delivery to one endpoint: the log row. */
export const WebhookDelivery = z.object({
  id: z.string().uuid(),
  endpoint_id: z.string().uuid(),
  /** The event's id: the `webhook-id` header, the same on every attempt and replay. */
  event_id: z.string().uuid(),
  event_type: WebhookEventType,
  memory_id: z.string().uuid().nullable(),
  status: WebhookDeliveryStatus,
  attempts: z.number().int().min(0),
  /** The last attempt's HTTP status; null: none answered (or none made yet). */
  response_status: z.number().int().nullable(),
  /** Why the last attempt failed, in a few words (no response body is kept). */
  last_error: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  /** When a pending delivery is next tried. */
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  /** The signed body as sent. */
  payload: z.record(z.unknown()),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryPage = PageFields.extend({
  /** Newest first. */
  results: z.array(WebhookDelivery),
});
export type WebhookDeliveryPage = z.infer<typeof WebhookDeliveryPage>;

export const DeleteWebhookEndpointResponse = z.object({ deleted: z.literal(true) });
export type DeleteWebhookEndpointResponse = z.infer<typeof DeleteWebhookEndpointResponse>;

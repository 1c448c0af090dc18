/**
 * Typed client of the Mnemo memory service.
 *
 * @example
 * ```ts
 * import { MemoryClient } from '@mnemo/client';
 * const client = new MemoryClient({ apiKey: 'mnemo_...' });
 * console.log(await client.health());
 * ```
 * @packageDocumentation
 */
export {
  CLIENT_VERSION,
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TRANSPORT,
  MemoryClient,
  MnemoClient,
  type ClientOptions,
  type Fetch,
} from './client.js';
export {
  Audit,
  Billing,
  Connectors,
  Context,
  DEFAULT_PART_CHARS,
  Feedback,
  History,
  Ingest,
  Links,
  Memories,
  Pins,
  Search,
  Usage,
  type AddMemoryOptions,
  type AuditLogParams,
  type IngestConversationParams,
  type IngestDocumentOptions,
  type IngestDocumentParams,
  type IngestProgress,
  type GetPinsParams,
  type SearchHistoryParams,
  type UpdatePinsParams,
} from './resources.js';
export {
  OwnerData,
  type ErasureReceipt,
  type ExportEnd,
  type ExportHeader,
  type ExportLine,
  type ExportParams,
  type ImportOptions,
  type ImportResponse,
} from './owner-data.js';
export { Webhooks } from './webhooks.js';
export type { RequestOptions, RequestSpec, RouteRef } from './transport/rest.js';
export type { ServedBy } from './transport/hybrid.js';
export { isSimpleSearch } from './transport/hybrid.js';
export {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  InvalidOwnerIdError,
  MnemoError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  errorFromResponse,
  type ClientErrorCode,
  type ErrorDetails,
  type MnemoErrorCode,
  type MnemoErrorInit,
} from './core/errors.js';
export type * from './core/types.js';
export { TRANSPORT_KINDS } from './core/types.js';
export type {
  BillingStatusResponse,
  CheckoutRequest,
  CheckoutResponse,
  ChunkProfile,
  ContextResponse,
  ConversationIngestResponse,
  ConversationMessage,
  DeleteMemoryResponse,
  DocumentIngestResponse,
  FeedbackPayload,
  FeedbackResponse,
  FeedbackValue,
  LegacyOwnerType,
  ListMemoriesResponse,
  Memory,
  MemoryInsertResponse,
  Metadata,
  MemoryType,
  OwnerType,
  RetrievalProfile,
  SearchMode,
  SearchResponse,
  SearchResultItem,
  VersionedHealthResponse,
  ContextFeedbackPayload,
  ContextFeedbackResponse,
  CreateLinkPayload,
  CreateLinkResponse,
  DeleteLinkQuery,
  DeleteLinkResponse,
  ListLinksResponse,
  MemoryLink,
  Pin,
  PinsResponse,
  ReplaySearchResponse,
  SavedQuery,
  SearchHistoryResponse,
  AuditLogEntry,
  AuditLogPage,
  ConnectorKindSettings,
  ConnectorSettings,
  ConnectorSettingsPatch,
  PruningMetrics,
  CreateWebhookEndpointPayload,
  UpdateWebhookEndpointPayload,
  WebhookDeliveriesQuery,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookEventType,
} from '@mnemo/contract';
// The contract's values and bounds, for callers that validate or list them (the CLI does).
export {
  CHUNK_PROFILES,
  CLIENT_OWNER_TYPES,
  FEEDBACK_VALUES,
  LEGACY_OWNER_TYPES,
  LIMITS,
  MAX_PINS_PER_OWNER,
  MEMORY_TYPES,
  OWNER_TYPES,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
} from '@mnemo/contract';

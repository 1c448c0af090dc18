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
  MemoryClient,
  MnemoClient,
  type ClientOptions,
  type Fetch,
} from './client.js';
export {
  Billing,
  Context,
  Feedback,
  Memories,
  Search,
  Usage,
  type AddMemoryOptions,
} from './resources.js';
export type { RequestOptions, RequestSpec, RouteRef } from './transport/rest.js';
export type { ServedBy } from './transport/hybrid.js';
export { isSimpleSearch } from './transport/hybrid.js';
export { backoffDelay, parseRetryAfter, seededRandom } from './internal/backoff.js';
export { normaliseOwner } from './internal/owner.js';
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
export type {
  ContextResponse,
  DeleteMemoryResponse,
  FeedbackPayload,
  FeedbackResponse,
  ListMemoriesResponse,
  Memory,
  MemoryInsertResponse,
  Metadata,
  MemoryType,
  OwnerType,
  SearchResponse,
  SearchResultItem,
  VersionedHealthResponse,
} from '@mnemo/contract';
export { MEMORY_TYPES, OWNER_TYPES } from '@mnemo/contract';

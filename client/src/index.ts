/**
 * Typed client of the Mnemo memory service.
 *
 * @example
 * ```ts
 * import { MnemoClient } from '@mnemo/client';
 * const client = new MnemoClient({ apiKey: 'mnemo_...' });
 * console.log(await client.health());
 * ```
 * @packageDocumentation
 */
export {
  DEFAULT_BASE_URL,
  DEFAULT_TIMEOUT_MS,
  Memories,
  MnemoClient,
  type ClientOptions,
  type Fetch,
  type RequestOptions,
  type RequestSpec,
  type RouteRef,
} from './client.js';
export {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
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
export type {
  DeleteMemoryResponse,
  ListMemoriesQuery,
  ListMemoriesResponse,
  Memory,
  VersionedHealthResponse,
} from '@mnemo/contract';

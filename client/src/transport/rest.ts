import { APIConnectionError, MnemoError, errorFromResponse } from '../core/errors.js';
import { MAX_RETRY_AFTER_MS, backoffDelay, parseRetryAfter } from '../internal/backoff.js';
import { fetchWithTimeout, type Fetch } from '../internal/fetch-with-timeout.js';
import { sleep } from '../internal/signals.js';

/** A route as the contract declares it: the client needs its method and path template. */
export interface RouteRef {
  method: string;
  path: string;
}

/** Options of a single call; they add to (never replace) the client's. */
export interface RequestOptions {
  /** Aborts this call at once, between retries too; never retried. The client's `signal` still applies. */
  signal?: AbortSignal | undefined;
  /** Overrides the client's `timeoutMs` (per attempt) for this call. */
  timeoutMs?: number | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
}

/** What a REST request sends besides the route. */
export interface RequestSpec extends RequestOptions {
  /** Values for the `:name` placeholders of the path; each is URI-encoded. */
  params?: Record<string, string>;
  /** Query parameters; `undefined` and `null` are left out, objects are JSON-encoded. */
  query?: object;
  /** JSON body. Sent identically on every attempt (a write's idempotency key included). */
  body?: unknown;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** A body that is not JSON (an import's JSON Lines), sent as is; replaces `body`. */
  rawBody?: { contentType: string; text: string };
  /** The response is not JSON (an export's JSON Lines): its text is the result. */
  responseText?: boolean;
}

/** A parsed 2xx answer and the server's id for the request (`x-request-id`). */
export interface RestResult<T> {
  data: T;
  requestId: string | undefined;
}

export interface RestTransportOptions {
  baseUrl: string;
  apiKey: string | undefined;
  fetch: Fetch;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
  random: () => number;
  signal: AbortSignal | undefined;
}

function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined)
      throw new TypeError(`Missing path parameter "${name}" for ${template}`);
    return encodeURIComponent(value);
  });
}

function queryString(query: object = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    search.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  const encoded = search.toString();
  return encoded === '' ? '' : `?${encoded}`;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  return JSON.parse(text);
}

/** 429 and every 5xx are worth another attempt; other statuses would fail the same way again. */
function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * The REST transport: one request, up to `maxRetries` more attempts on 429, 5xx and network
 * errors (timeouts included), each attempt under its own timeout. Between attempts it waits the
 * server's `Retry-After` when sent (up to 60 s; longer is not retried), else full jitter
 * `random(0, retryBaseMs * 2^n)`. A caller abort ends everything at once and is never retried.
 */
export class RestTransport {
  constructor(readonly options: RestTransportOptions) {}

  async request<T>(route: RouteRef, spec: RequestSpec = {}): Promise<RestResult<T>> {
    const { baseUrl, apiKey, fetch, random, retryBaseMs } = this.options;
    const url = `${baseUrl}${fillPath(route.path, spec.params)}${queryString(spec.query)}`;
    const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
    if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
    const init: RequestInit = { method: route.method, headers };
    if (spec.rawBody !== undefined) {
      headers['content-type'] = spec.rawBody.contentType;
      init.body = spec.rawBody.text;
    } else if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      // Serialised once: every attempt sends the same bytes, the same idempotency key included.
      init.body = JSON.stringify(spec.body);
    }
    const timeoutMs = spec.timeoutMs ?? this.options.timeoutMs;
    const maxRetries = spec.maxRetries ?? this.options.maxRetries;
    const signals = [this.options.signal, spec.signal];

    for (let retry = 0; ; retry++) {
      let waitMs: number;
      try {
        const { response, text } = await fetchWithTimeout(url, init, { fetch, timeoutMs, signals });
        if (response.ok)
          return {
            data: spec.responseText ? (text as T) : this.#parse<T>(route, response, text),
            requestId: response.headers.get('x-request-id') ?? undefined,
          };
        let body: unknown;
        try {
          body = parseJson(text);
        } catch {
          body = text;
        }
        const error = errorFromResponse(response.status, body, response.headers);
        if (!isRetryableStatus(response.status) || retry >= maxRetries) throw error;
        const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
        if (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS) throw error;
        waitMs = retryAfter ?? backoffDelay(retry, retryBaseMs, random);
      } catch (error) {
        // Connection failures and timeouts are retried; a user abort is an APIUserAbortError,
        // not an APIConnectionError, and so never is.
        if (!(error instanceof APIConnectionError) || retry >= maxRetries) throw error;
        waitMs = backoffDelay(retry, retryBaseMs, random);
      }
      await sleep(waitMs, signals);
    }
  }

  #parse<T>(route: RouteRef, response: Response, text: string): T {
    try {
      return parseJson(text) as T;
    } catch (cause) {
      throw new MnemoError({
        code: 'INVALID_RESPONSE',
        message: `Expected a JSON body from ${route.method} ${route.path}`,
        status: response.status,
        requestId: response.headers.get('x-request-id') ?? undefined,
        cause,
      });
    }
  }
}

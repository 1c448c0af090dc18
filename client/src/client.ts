import {
  contract,
  type DeleteMemoryResponse,
  type ListMemoriesQuery,
  type ListMemoriesResponse,
  type Memory,
  type VersionedHealthResponse,
} from '@mnemo/contract';
import { errorFromResponse, MnemoError } from './core/errors.js';
import { fetchWithTimeout, type Fetch } from './internal/fetch-with-timeout.js';

export type { Fetch } from './internal/fetch-with-timeout.js';

/** Where the service listens when nothing else is configured. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';

/** Per-attempt timeout when nothing else is configured: one minute, as the spec says. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** Options of {@link MnemoClient}. Every field is optional. */
export interface ClientOptions {
  /**
   * Root URL of the service, without the `/v1` prefix (a trailing slash is fine; a path prefix
   * such as `https://example.com/mnemo` is kept).
   * @default process.env.MNEMO_BASE_URL ?? 'http://127.0.0.1:8787'
   */
  baseUrl?: string | undefined;
  /**
   * API key, sent as `Authorization: Bearer <apiKey>`. `null` sends no key even when the
   * environment has one (health routes are public).
   * @default process.env.MNEMO_API_KEY
   */
  apiKey?: string | null | undefined;
  /**
   * Milliseconds one attempt may take, from sending the request to reading the whole body.
   * @default 60000
   */
  timeoutMs?: number | undefined;
  /**
   * The `fetch` to send requests with; inject one to test, proxy or instrument.
   * @default globalThis.fetch (looked up at call time, so late polyfills and mocks apply)
   */
  fetch?: Fetch | undefined;
  /**
   * Aborts every request of this client when it fires (each request can add its own).
   * @default undefined
   */
  signal?: AbortSignal | undefined;
}

/** Options of a single call; they add to (never replace) the client's. */
export interface RequestOptions {
  /** Aborts this call; the client's own `signal` still applies. */
  signal?: AbortSignal | undefined;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
}

/** A route as the contract declares it: the client needs its method and path template. */
export interface RouteRef {
  method: string;
  path: string;
}

/** What {@link MnemoClient.request} sends besides the route. */
export interface RequestSpec extends RequestOptions {
  /** Values for the `:name` placeholders of the path; each is URI-encoded. */
  params?: Record<string, string>;
  /** Query parameters; `undefined` and `null` are left out, objects are JSON-encoded. */
  query?: Record<string, unknown>;
  /** JSON body. */
  body?: unknown;
}

function readEnv(name: string): string | undefined {
  const value = globalThis.process?.env?.[name]?.trim();
  return value === '' ? undefined : value;
}

const defaultFetch: Fetch = (url, init) => globalThis.fetch(url, init);

function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined)
      throw new TypeError(`Missing path parameter "${name}" for ${template}`);
    return encodeURIComponent(value);
  });
}

function queryString(query: Record<string, unknown> = {}): string {
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

/** Memories of the workspace the API key belongs to. Reach it as `client.memories`. */
export class Memories {
  constructor(private readonly client: MnemoClient) {}

  /**
   * One page of memories, newest first. `metadata` is an object here; it is JSON-encoded into
   * the query string for you.
   *
   * @example
   * ```ts
   * const { memories, has_more } = await client.memories.list({ user_id: 'u_42', page_size: 20 });
   * ```
   */
  list(query: ListMemoriesQuery = {}, options?: RequestOptions): Promise<ListMemoriesResponse> {
    return this.client.request(contract.memories.listMemories, { ...options, query });
  }

  /** One memory by id; throws `NotFoundError` when there is none. */
  get(id: string, options?: RequestOptions): Promise<Memory> {
    return this.client.request(contract.memories.getMemory, { ...options, params: { id } });
  }

  /** Deletes a memory with its chunks and links; throws `NotFoundError` when there is none. */
  delete(id: string, options?: RequestOptions): Promise<DeleteMemoryResponse> {
    return this.client.request(contract.memories.deleteMemory, { ...options, params: { id } });
  }
}

/**
 * Typed client of the Mnemo memory service. Every non-2xx answer throws a subclass of
 * `MnemoError` exposing `code`, `message`, `status` and `requestId`.
 *
 * @example
 * ```ts
 * import { MnemoClient, AuthenticationError } from '@mnemo/client';
 *
 * const client = new MnemoClient({ apiKey: process.env.MNEMO_API_KEY });
 * const { status, version } = await client.health();
 * const page = await client.memories.list({ user_id: 'u_42' });
 * for (const memory of page.results) console.log(memory.id, memory.text);
 * ```
 */
export class MnemoClient {
  /** The resolved root URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The resolved per-attempt timeout. */
  readonly timeoutMs: number;
  /** Memories: list, get, delete. */
  readonly memories: Memories;

  readonly #apiKey: string | undefined;
  readonly #fetch: Fetch;
  readonly #signal: AbortSignal | undefined;

  constructor({
    baseUrl = readEnv('MNEMO_BASE_URL') ?? DEFAULT_BASE_URL,
    apiKey = readEnv('MNEMO_API_KEY'),
    timeoutMs = DEFAULT_TIMEOUT_MS,
    fetch = defaultFetch,
    signal,
  }: ClientOptions = {}) {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
    }
    this.baseUrl = new URL(baseUrl).href.replace(/\/+$/, '');
    this.timeoutMs = timeoutMs;
    this.#apiKey = apiKey ?? undefined;
    this.#fetch = fetch;
    this.#signal = signal;
    this.memories = new Memories(this);
  }

  /** Liveness of the service, with its version and embedding model (`GET /v1/health`). */
  health(options?: RequestOptions): Promise<VersionedHealthResponse> {
    return this.request(contract.health.getVersionedHealth, { ...options });
  }

  /**
   * Sends one request to a contract route and returns its parsed JSON body. The typed methods
   * use it; call it directly only for a route that has no method yet. The response body is
   * parsed, not validated: the server validates against the same contract.
   *
   * @example
   * ```ts
   * import { contract, type Memory } from '@mnemo/contract';
   * const memory = await client.request<Memory>(contract.memories.getMemory, { params: { id } });
   * ```
   */
  async request<T>(route: RouteRef, spec: RequestSpec = {}): Promise<T> {
    const url = `${this.baseUrl}${fillPath(route.path, spec.params)}${queryString(spec.query)}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    const init: RequestInit = { method: route.method, headers };
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(spec.body);
    }

    const timeoutMs = spec.timeoutMs ?? this.timeoutMs;
    const { response, text } = await fetchWithTimeout(url, init, {
      fetch: this.#fetch,
      timeoutMs,
      signals: [this.#signal, spec.signal],
    });

    if (!response.ok) {
      let body: unknown;
      try {
        body = parseJson(text);
      } catch {
        body = text;
      }
      throw errorFromResponse(response.status, body, response.headers);
    }

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

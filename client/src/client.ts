import { OwnerData } from './owner-data.js';
import { contract, type VersionedHealthResponse } from '@mnemo/contract';
import { TRANSPORT_KINDS, type TransportKind } from './core/types.js';
import type { Fetch } from './internal/fetch-with-timeout.js';
import {
  Audit,
  Billing,
  Connectors,
  Context,
  Feedback,
  History,
  Ingest,
  Links,
  Memories,
  Pins,
  Search,
  Usage,
} from './resources.js';
import { SearchRouter, type ServedBy } from './transport/hybrid.js';
import { Webhooks } from './webhooks.js';
import { McpTransport } from './transport/mcp.js';
import {
  RestTransport,
  type RequestOptions,
  type RequestSpec,
  type RouteRef,
} from './transport/rest.js';
import { withConsistencyToken } from './internal/consistency.js';

export type { Fetch } from './internal/fetch-with-timeout.js';

/** The version this client reports to the server in MCP `initialize`. */
export const CLIENT_VERSION = '0.1.0';

/** Where the service listens when nothing else is configured (the server's default `PORT`). */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';
/** Per-attempt timeout when nothing else is configured: one minute, as the spec says. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Retries after the first attempt, as the spec says. */
export const DEFAULT_MAX_RETRIES = 2;
/** Base of the exponential backoff, in milliseconds. */
export const DEFAULT_RETRY_BASE_MS = 200;
/** How searches travel when nothing else is configured. */
export const DEFAULT_TRANSPORT: TransportKind = 'hybrid';

/** Options of {@link MemoryClient}. Every field is optional. */
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
   * Milliseconds one attempt may take, from sending the request to reading the whole body. Each
   * retry gets a fresh budget; running out throws `APITimeoutError` (code `TIMEOUT`).
   * @default 60000
   */
  timeoutMs?: number | undefined;
  /**
   * Aborts every call of this client when it fires, at once (also while waiting to retry);
   * throws `APIUserAbortError` (code `ABORTED`) and is never retried.
   * @default undefined
   */
  signal?: AbortSignal | undefined;
  /**
   * REST retries after the first attempt, on 429, 5xx and network errors (timeouts included).
   * @default 2
   */
  maxRetries?: number | undefined;
  /**
   * Base of the backoff: before retry `n` (from 0) the client waits `random(0, retryBaseMs * 2^n)`
   * milliseconds (full jitter), or the server's `Retry-After` when it sends one (up to 60 s).
   * @default 200
   */
  retryBaseMs?: number | undefined;
  /**
   * How `search.query` and `context.get` travel: `rest`, `mcp` (the hosted MCP tools), or
   * `hybrid` (MCP for simple searches, REST for searches with filters, search_mode, min_score,
   * retrieval_profile, page or page_size, and REST again when MCP fails). Every other call is REST.
   * `mcp` and `hybrid` use the optional peer dependency `@modelcontextprotocol/sdk`; hybrid opens
   * its session in the background (no call waits for it) and stays on REST without the package.
   * @default 'hybrid'
   */
  transport?: TransportKind | undefined;
  /**
   * The `fetch` to send requests with (REST and MCP); inject one to test, proxy or instrument.
   * @default globalThis.fetch (looked up at call time, so late polyfills and mocks apply)
   */
  fetch?: Fetch | undefined;
  /**
   * The `[0, 1)` random source of the backoff jitter; inject a seeded one for reproducible waits.
   * @default Math.random
   */
  random?: (() => number) | undefined;
}

function readEnv(name: string): string | undefined {
  const value = (
    globalThis as { process?: { env?: Record<string, string | undefined> } }
  ).process?.env?.[name]?.trim();
  return value === '' ? undefined : value;
}

const defaultFetch: Fetch = (url, init) => globalThis.fetch(url, init);

function nonNegativeInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative integer, got ${value}`);
  }
  return value;
}

/**
 * Typed client of the Mnemo memory service. Every non-2xx answer throws a subclass of
 * `MnemoError` exposing `code`, `message`, `status`, `requestId` and `details`.
 *
 * @example
 * ```ts
 * import { MemoryClient } from '@mnemo/client';
 *
 * const client = new MemoryClient({ apiKey: process.env.MNEMO_API_KEY });
 * await client.memories.add({ text: 'Prefers window seats', ownerId: 'u_42' });
 * const { results } = await client.search.query({ query: 'seat preference', ownerId: 'u_42' });
 * const { context_text } = await client.context.get({ query: 'How does u_42 travel?', ownerId: 'u_42' });
 * await client.close(); // ends the MCP session, if one was opened
 * ```
 */
export class MemoryClient {
  /** The resolved root URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The resolved per-attempt timeout. */
  readonly timeoutMs: number;
  /** The resolved retry count. */
  readonly maxRetries: number;
  /** The resolved backoff base. */
  readonly retryBaseMs: number;
  /** The resolved transport of searches. */
  readonly transport: TransportKind;
  /** Memories: add, list, get, delete. */
  readonly memories: Memories;
  /** Search: `search.query(params)`. */
  readonly search: Search;
  /** Context: `context.get(params)`. */
  readonly context: Context;
  /** Feedback: `feedback.send({ feedback, request_id })`. */
  readonly feedback: Feedback;
  /** Usage: `usage.today()`, today's use against the plan's limits. */
  readonly usage: Usage;
  /** Billing: `billing.status()`, `billing.checkout({ plan })`. */
  readonly billing: Billing;
  /** Ingest (operator routes): `ingest.conversation({ messages })`, `ingest.document({ text })`. */
  readonly ingest: Ingest;
  /** Links (operator routes): `links.add(id, { target_id })`, `links.list(id)`, `links.remove(id, { target_id })`. */
  readonly links: Links;
  /** Search history (operator routes): `history.list()`, `history.replay(queryId)`. */
  readonly history: History;
  /** Profile pins (operator routes): `pins.update({ ownerId, pin })`, `pins.get({ ownerId })`. */
  readonly pins: Pins;
  /** Audit (operator routes): `audit.log({ status: '4xx' })`, `audit.pruningMetrics()`. */
  readonly audit: Audit;
  /** Connector settings (operator routes): `connectors.get()`, `connectors.update(patch)`. */
  readonly connectors: Connectors;
  /** Owner data (operator routes): `ownerData.export({ ownerId })`, `.import(lines)`, `.erase({ ownerId })`. */
  readonly ownerData: OwnerData;
  /** Signed lifecycle webhooks (operator routes): endpoints, their delivery log and replay. */
  readonly webhooks: Webhooks;

  readonly #rest: RestTransport;
  readonly #mcp: McpTransport;
  readonly #router: SearchRouter;

  constructor({
    baseUrl = readEnv('MNEMO_BASE_URL') ?? DEFAULT_BASE_URL,
    apiKey = readEnv('MNEMO_API_KEY'),
    timeoutMs = DEFAULT_TIMEOUT_MS,
    signal,
    maxRetries = DEFAULT_MAX_RETRIES,
    retryBaseMs = DEFAULT_RETRY_BASE_MS,
    transport = DEFAULT_TRANSPORT,
    fetch = defaultFetch,
    random = Math.random,
  }: ClientOptions = {}) {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
    }
    if (!(TRANSPORT_KINDS as readonly string[]).includes(transport)) {
      const kinds = `${TRANSPORT_KINDS.slice(0, -1).join(', ')} or ${TRANSPORT_KINDS.at(-1)}`;
      throw new TypeError(`transport must be ${kinds}, got ${String(transport)}`);
    }
    this.baseUrl = new URL(baseUrl).href.replace(/\/+$/, '');
    this.timeoutMs = timeoutMs;
    this.maxRetries = nonNegativeInt('maxRetries', maxRetries);
    this.retryBaseMs = nonNegativeInt('retryBaseMs', retryBaseMs);
    this.transport = transport;
    const key = apiKey ?? undefined;
    // Both transports share it: a search over MCP sees a write made over REST.
    const consistentFetch = withConsistencyToken(fetch);
    this.#rest = new RestTransport({
      baseUrl: this.baseUrl,
      apiKey: key,
      fetch: consistentFetch,
      timeoutMs,
      maxRetries: this.maxRetries,
      retryBaseMs: this.retryBaseMs,
      random,
      signal,
    });
    this.#mcp = new McpTransport({
      baseUrl: this.baseUrl,
      apiKey: key,
      fetch: consistentFetch,
      timeoutMs,
      signal,
      clientVersion: CLIENT_VERSION,
    });
    this.#router = new SearchRouter(transport, this.#rest, this.#mcp);
    this.memories = new Memories(this.#rest);
    this.search = new Search(this.#router);
    this.context = new Context(this.#router);
    this.feedback = new Feedback(this.#rest);
    this.usage = new Usage(this.#rest);
    this.billing = new Billing(this.#rest);
    this.ingest = new Ingest(this.#rest);
    this.links = new Links(this.#rest);
    this.history = new History(this.#rest);
    this.pins = new Pins(this.#rest);
    this.audit = new Audit(this.#rest);
    this.connectors = new Connectors(this.#rest);
    this.ownerData = new OwnerData(this.#rest);
    this.webhooks = new Webhooks(this.#rest);
  }

  /**
   * Liveness of the service, with its version and embedding model (`GET /v1/health`).
   *
   * @example
   * ```ts
   * const { status, version } = await client.health();
   * ```
   */
  async health(options?: RequestOptions): Promise<VersionedHealthResponse> {
    const { data } = await this.#rest.request<VersionedHealthResponse>(
      contract.health.getVersionedHealth,
      { ...options },
    );
    return data;
  }

  /** Which transport served the most recent search or context call (`mcp` or `rest`). */
  get lastSearchTransport(): ServedBy | undefined {
    return this.#router.lastServedBy;
  }

  /**
   * Sends one REST request to a route and returns its parsed JSON body, with the client's
   * retries and timeouts. The typed methods use it; call it directly only for a route that has
   * no method yet.
   *
   * @example
   * ```ts
   * import type { Memory } from '@mnemo/client';
   * const memory = await client.request<Memory>(
   *   { method: 'GET', path: '/v1/memories/:id' },
   *   { params: { id } },
   * );
   * ```
   */
  async request<T>(route: RouteRef, spec: RequestSpec = {}): Promise<T> {
    return (await this.#rest.request<T>(route, spec)).data;
  }

  /**
   * Opens the MCP session now, so that the next simple searches of the `hybrid` transport go over
   * MCP from the start (otherwise the first one opens it in the background and is served over
   * REST). Not needed for correctness; rejects when the session cannot open (for example
   * `MCP_SDK_MISSING` when the optional `@modelcontextprotocol/sdk` is not installed). Does
   * nothing with the `rest` transport.
   *
   * @example
   * ```ts
   * const client = new MemoryClient();
   * await client.connect(); // at start-up, off the path of the first user request
   * ```
   */
  async connect(options?: Pick<RequestOptions, 'signal' | 'timeoutMs'>): Promise<void> {
    if (this.transport === 'rest') return;
    await this.#mcp.connect(options);
  }

  /**
   * Ends the MCP session, if one was opened (an open session holds a connection that keeps a
   * Node process running). The client stays usable (a new session opens on demand).
   */
  close(): Promise<void> {
    return this.#mcp.close();
  }
}

/** The earlier name of {@link MemoryClient}, kept for compatibility. */
export const MnemoClient = MemoryClient;
/** The earlier name of {@link MemoryClient}, kept for compatibility. */
export type MnemoClient = MemoryClient;

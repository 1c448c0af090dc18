import {
  contract,
  PII_SCAN_HEADER,
  type BillingStatusResponse,
  type CheckoutRequest,
  type CheckoutResponse,
  type ConversationIngestPayload,
  type ConversationIngestResponse,
  type DocumentIngestPayload,
  type DocumentIngestResponse,
  type IngestResponse,
  type DeleteMemoryResponse,
  type FeedbackPayload,
  type FeedbackResponse,
  type ListMemoriesResponse,
  type Memory,
  type MemoryInsertResponse,
  type ContextFeedbackPayload,
  type ContextFeedbackResponse,
  type CreateLinkPayload,
  type CreateLinkResponse,
  type DeleteLinkQuery,
  type DeleteLinkResponse,
  type ListLinksResponse,
  type PinsResponse,
  type ReplaySearchResponse,
  type SearchHistoryQuery,
  type SearchHistoryResponse,
  type UpdatePinsPayload,
  type AuditLogPage,
  type ConnectorSettings,
  type ConnectorSettingsPatch,
  type PruningMetrics,
  type MemoryBreakdownResponse,
  type UsageHistoryQuery,
  type UsageHistoryResponse,
} from '@mnemo/contract';
import type {
  AddMemoryParams,
  ContextResult,
  ListMemoriesParams,
  OwnerParams,
  SearchParams,
  SearchResult,
  UsageToday,
} from './core/types.js';
import { documentParts } from './internal/document-parts.js';
import { randomKey } from './internal/ids.js';
import { withWireOwner } from './internal/owner.js';
import type { SearchRouter } from './transport/hybrid.js';
import type { RequestOptions, RestTransport, RouteRef } from './transport/rest.js';

/** Options of `client.memories.add`. */
export interface AddMemoryOptions extends RequestOptions {
  /** Sends `x-safety-pii-scan: 1`: the response then names email/phone hints it found. */
  piiScan?: boolean | undefined;
}

/** Memories: `client.memories.add / list / get / delete`. */
export class Memories {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Stores a memory (`POST /v1/memories`). Retries are safe: the payload's `idempotency_key`
   * (one is generated when you give none) is sent unchanged on every attempt, so a retried write
   * never stores twice. Owner aliases are folded into `owner_id`/`owner_type` first.
   *
   * @example
   * ```ts
   * const { memory_id, deduped } = await client.memories.add({
   *   text: 'Jane is allergic to peanuts',
   *   ownerId: 'jane',
   *   memory_type: 'fact',
   * });
   * ```
   */
  async add(
    params: AddMemoryParams,
    options: AddMemoryOptions = {},
  ): Promise<MemoryInsertResponse> {
    const body = withWireOwner(params);
    const payload = { ...body, idempotency_key: body.idempotency_key ?? randomKey() };
    const { piiScan, ...rest } = options;
    const { data } = await this.rest.request<MemoryInsertResponse>(contract.memories.createMemory, {
      ...rest,
      body: payload,
      ...(piiScan ? { headers: { [PII_SCAN_HEADER]: '1' } } : {}),
    });
    return data;
  }

  /**
   * One page of memories, newest first (`GET /v1/memories`). `metadata` is an object; it is
   * JSON-encoded into the query string for you.
   *
   * @example
   * ```ts
   * const { results, has_more } = await client.memories.list({ ownerId: 'u_42', page_size: 20 });
   * ```
   */
  async list(
    params: ListMemoriesParams = {},
    options?: RequestOptions,
  ): Promise<ListMemoriesResponse> {
    const { data } = await this.rest.request<ListMemoriesResponse>(contract.memories.listMemories, {
      ...options,
      query: withWireOwner(params),
    });
    return data;
  }

  /** One memory by id (`GET /v1/memories/{id}`); throws `NotFoundError` when there is none. */
  async get(id: string, options?: RequestOptions): Promise<Memory> {
    const { data } = await this.rest.request<Memory>(contract.memories.getMemory, {
      ...options,
      params: { id },
    });
    return data;
  }

  /**
   * Deletes a memory with its chunks and links (`DELETE /v1/memories/{id}`); throws
   * `NotFoundError` when there is none.
   */
  async delete(id: string, options?: RequestOptions): Promise<DeleteMemoryResponse> {
    const { data } = await this.rest.request<DeleteMemoryResponse>(contract.memories.deleteMemory, {
      ...options,
      params: { id },
    });
    return data;
  }
}

/** Search: `client.search.query(...)`. */
export class Search {
  constructor(private readonly router: SearchRouter) {}

  /**
   * Hybrid search over an owner's memories. With `transport: 'hybrid'` (the default) a simple
   * search (query, owner, top_k, scope, namespace, containerTag) goes over MCP
   * (`search_memories`), anything else over REST (`POST /v1/search`), and an MCP failure is
   * retried over REST. The result has the same shape either way.
   *
   * @example
   * ```ts
   * const { results, request_id } = await client.search.query({ query: 'allergies', ownerId: 'jane', top_k: 5 });
   * for (const hit of results) console.log(hit.score.toFixed(2), hit.text);
   * ```
   */
  async query(params: SearchParams, options?: RequestOptions): Promise<SearchResult> {
    return this.router.call(
      'search_memories',
      contract.search.searchMemories,
      withWireOwner(params),
      options,
    );
  }
}

/** Context: `client.context.get(...)`. */
export class Context {
  constructor(private readonly router: SearchRouter) {}

  /**
   * Prompt-ready context with numbered citations (`get_context` over MCP, `POST /v1/context`
   * over REST; routed like `client.search.query`).
   *
   * @example
   * ```ts
   * const { context_text, citations } = await client.context.get({ query: 'What does Jane eat?', ownerId: 'jane' });
   * ```
   */
  async get(params: SearchParams, options?: RequestOptions): Promise<ContextResult> {
    return this.router.call(
      'get_context',
      contract.search.getContext,
      withWireOwner(params),
      options,
    );
  }
}

/** Feedback: `client.feedback.send(...)`. */
export class Feedback {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Rates the results of an earlier search or context call (`POST /v1/feedback`).
   *
   * @example
   * ```ts
   * const result = await client.search.query({ query: 'seat', ownerId: 'u_42' });
   * await client.feedback.send({ feedback: 'positive', request_id: result.request_id! });
   * ```
   */
  async send(params: FeedbackPayload, options?: RequestOptions): Promise<FeedbackResponse> {
    const { data } = await this.rest.request<FeedbackResponse>(contract.search.sendFeedback, {
      ...options,
      body: params,
    });
    return data;
  }

  /**
   * Feedback on a context response (`POST /v1/context/feedback`, an operator route): a `rating`
   * (applied like `send`), the memories that helped or did not, and a comment, kept as one row.
   *
   * @example
   * ```ts
   * const ctx = await client.context.get({ query: 'diet', ownerId: 'u_42' });
   * await client.feedback.context({ request_id: ctx.request_id!, rating: 'negative', comment: 'stale' });
   * ```
   */
  async context(
    params: ContextFeedbackPayload,
    options?: RequestOptions,
  ): Promise<ContextFeedbackResponse> {
    const { data } = await this.rest.request<ContextFeedbackResponse>(
      contract.history.sendContextFeedback,
      { ...options, body: params },
    );
    return data;
  }
}

// Not in the contract yet: typed from the spec's table.
const USAGE_TODAY: RouteRef = { method: 'GET', path: '/v1/usage/today' };

/** Usage: `client.usage.today()`. */
export class Usage {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Today's consumption and limits (`GET /v1/usage/today`).
   *
   * @example
   * ```ts
   * const { plan, writes, limits } = await client.usage.today();
   * ```
   */
  async today(options?: RequestOptions): Promise<UsageToday> {
    const { data } = await this.rest.request<UsageToday>(USAGE_TODAY, { ...options });
    return data;
  }

  /**
   * Requests, writes, reads and embeds per UTC day, oldest first (`GET /v1/usage/history`).
   *
   * @example
   * ```ts
   * const { days } = await client.usage.history({ days: 30 });
   * ```
   */
  async history(
    params: Partial<UsageHistoryQuery> = {},
    options?: RequestOptions,
  ): Promise<UsageHistoryResponse> {
    const { data } = await this.rest.request<UsageHistoryResponse>(contract.usage.getUsageHistory, {
      ...options,
      query: params,
    });
    return data;
  }

  /** Memories by lifecycle state and by owner (`GET /v1/usage/memories`). */
  async memories(options?: RequestOptions): Promise<MemoryBreakdownResponse> {
    const { data } = await this.rest.request<MemoryBreakdownResponse>(
      contract.usage.getMemoryBreakdown,
      { ...options },
    );
    return data;
  }
}

/** Billing: `client.billing.status()` and `client.billing.checkout(...)`. */
export class Billing {
  constructor(private readonly rest: RestTransport) {}

  /**
   * The workspace's plan (`GET /v1/billing/status`). Use `effective_plan` for display and
   * quotas; `plan` is a legacy label (`pro` or `team`).
   *
   * @example
   * ```ts
   * const { effective_plan, plan_status, current_period_end } = await client.billing.status();
   * ```
   */
  async status(options?: RequestOptions): Promise<BillingStatusResponse> {
    const { data } = await this.rest.request<BillingStatusResponse>(
      contract.billing.getBillingStatus,
      { ...options },
    );
    return data;
  }

  /**
   * Starts a purchase (`POST /v1/billing/checkout`): the server records a transaction at its own
   * price of the plan and returns a form for the browser to POST to the provider's hosted page.
   * Fails with a 403 `CONTROL_PLANE_ONLY` error when the server has no billing.
   *
   * @example
   * ```ts
   * const { url, fields } = await client.billing.checkout({ plan: 'build', email: 'a@b.co' });
   * // render <form method="POST" action={url}> with one hidden input per field, and submit it
   * ```
   */
  async checkout(params: CheckoutRequest, options?: RequestOptions): Promise<CheckoutResponse> {
    const { data } = await this.rest.request<CheckoutResponse>(contract.billing.createCheckout, {
      ...options,
      body: params,
    });
    return data;
  }
}

type OwnerWireKey = keyof OwnerParams;

/** `client.ingest.conversation(...)`: the conversation payload with {@link OwnerParams}. */
export type IngestConversationParams = Omit<ConversationIngestPayload, OwnerWireKey> & OwnerParams;

/**
 * `client.ingest.document(...)`: the document payload with {@link OwnerParams}. `section_offset`
 * and `section_title` are set per request when the document goes in parts.
 */
export type IngestDocumentParams = Omit<
  DocumentIngestPayload,
  OwnerWireKey | 'section_offset' | 'section_title'
> &
  OwnerParams;

/** Where a document sent in parts stands, after each request. */
export interface IngestProgress {
  /** Requests done, of `parts`. */
  part: number;
  parts: number;
  /** Sections and pieces (memories) handled so far. */
  sections: number;
  items: number;
}

/** Options of `client.ingest.document`. */
export interface IngestDocumentOptions extends RequestOptions {
  /**
   * Characters of text per request (default 100 000): a longer document is sent in several
   * requests of whole sections, numbered as if sent at once.
   */
  partChars?: number | undefined;
  /** Called after each request. */
  onProgress?: ((progress: IngestProgress) => void) | undefined;
}

/** Default characters of document text per request. */
export const DEFAULT_PART_CHARS = 100_000;

/** A stable id of a document's text (SHA-256, 16 hex digits), or a random one without Web Crypto. */
async function documentIdOf(text: string): Promise<string> {
  // Typed structurally: the client builds without the DOM library.
  const subtle = (
    globalThis as {
      crypto?: {
        subtle?: { digest(algorithm: string, data: Uint8Array): Promise<ArrayBuffer> };
      };
    }
  ).crypto?.subtle;
  if (!subtle) return randomKey().replace(/-/g, '').slice(0, 16);
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  const bytes = Array.from(new Uint8Array(digest).slice(0, 8));
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Ingest: `client.ingest.conversation(...)` and `client.ingest.document(...)` (operator routes). */
export class Ingest {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Stores a conversation as memories, turn by turn (`POST /v1/memories/conversation`): give
   * `messages` (role, content, optional name and timestamp) or a `transcript` of `Speaker: text`
   * lines. Retries are safe: the `idempotency_key` (generated when you give none) is sent
   * unchanged, and the server derives each turn's key from it. See docs/ingest.md.
   *
   * @example
   * ```ts
   * const { stored, turns } = await client.ingest.conversation({
   *   ownerId: 'u_42',
   *   messages: [
   *     { role: 'user', content: 'I moved to Lisbon last month.' },
   *     { role: 'assistant', content: 'Noted!' },
   *   ],
   * });
   * ```
   */
  async conversation(
    params: IngestConversationParams,
    options?: RequestOptions,
  ): Promise<ConversationIngestResponse> {
    const body = withWireOwner(params);
    const { data } = await this.rest.request<ConversationIngestResponse>(
      contract.ingest.ingestConversation,
      { ...options, body: { ...body, idempotency_key: body.idempotency_key ?? randomKey() } },
    );
    return data;
  }

  /**
   * Stores a document as memories (`POST /v1/ingest`, `type: "document"`): the server cuts it at
   * its headings and paragraphs and keeps its source (title, source, section, piece n of m) on
   * every memory. A document over `partChars` (or of more pieces than one request may store)
   * goes in several requests of whole sections, one after another, under one `document_id` (a hash of the text unless you give one) and one
   * idempotency key: calling again with the same `idempotency_key` after a failure replays the
   * parts already stored and sends the rest. Stops after a part the server did not complete.
   *
   * @example
   * ```ts
   * const result = await client.ingest.document(
   *   { text: handbook, title: 'Staff handbook', source: 'handbook.md', ownerId: 'support' },
   *   { onProgress: ({ part, parts }) => console.log(`${part}/${parts}`) },
   * );
   * ```
   */
  async document(
    params: IngestDocumentParams,
    options: IngestDocumentOptions = {},
  ): Promise<DocumentIngestResponse> {
    const { partChars = DEFAULT_PART_CHARS, onProgress, ...requestOptions } = options;
    const body = withWireOwner(params);
    const parts = documentParts(body.text, partChars, body.max_piece_chars);
    const shared = {
      ...body,
      type: 'document' as const,
      idempotency_key: body.idempotency_key ?? randomKey(),
      ...(parts.length > 1
        ? { document_id: body.document_id ?? (await documentIdOf(body.text)) }
        : {}),
    };
    let total: DocumentIngestResponse | undefined;
    for (const [index, part] of parts.entries()) {
      const { data } = await this.rest.request<IngestResponse>(contract.ingest.ingest, {
        ...requestOptions,
        body: {
          ...shared,
          text: part.text,
          ...(part.section_offset > 0 ? { section_offset: part.section_offset } : {}),
          ...(part.section_title ? { section_title: part.section_title } : {}),
        },
      });
      if (data.type !== 'document')
        throw new TypeError(`expected a document result, got ${data.type}`);
      const { type: _type, ...result } = data;
      total = total ? mergeDocumentResults(total, result) : result;
      onProgress?.({
        part: index + 1,
        parts: parts.length,
        sections: total.sections,
        items: total.items.length,
      });
      if (!result.complete) break;
    }
    // documentParts always gives at least one part.
    return total!;
  }
}

/** Two parts' results as one: counts added, items in order. */
function mergeDocumentResults(
  a: DocumentIngestResponse,
  b: DocumentIngestResponse,
): DocumentIngestResponse {
  return {
    complete: a.complete && b.complete,
    stored: a.stored + b.stored,
    deduped: a.deduped + b.deduped,
    replayed: a.replayed + b.replayed,
    failed: a.failed + b.failed,
    skipped: a.skipped + b.skipped,
    document_id: a.document_id,
    sections: a.sections + b.sections,
    items: [...a.items, ...b.items],
  };
}

/** Links (operator routes): `client.links.add / list / remove`. */
export class Links {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Links a memory to another of the same owner (`POST /v1/memories/{id}/links`); context then
   * shows a relevant linked memory after the hit it is linked to. The relation is a lower-case
   * slug, `related` by default. Idempotent: an existing edge comes back with `created: false`.
   *
   * @example
   * ```ts
   * const { link, created } = await client.links.add(memoryId, { target_id: otherId, relation: 'mentions' });
   * ```
   */
  async add(
    memoryId: string,
    params: CreateLinkPayload,
    options?: RequestOptions,
  ): Promise<CreateLinkResponse> {
    const { data } = await this.rest.request<CreateLinkResponse>(contract.links.createLink, {
      ...options,
      params: { id: memoryId },
      body: params,
    });
    return data;
  }

  /** Links with the memory at either end (`GET /v1/memories/{id}/links`), oldest first. */
  async list(memoryId: string, options?: RequestOptions): Promise<ListLinksResponse> {
    const { data } = await this.rest.request<ListLinksResponse>(contract.links.listLinks, {
      ...options,
      params: { id: memoryId },
    });
    return data;
  }

  /**
   * Deletes the links from a memory to `target_id` (`DELETE /v1/memories/{id}/links`): those of
   * `relation`, or all of them without one. Throws `NotFoundError` when there is none.
   */
  async remove(
    memoryId: string,
    params: DeleteLinkQuery,
    options?: RequestOptions,
  ): Promise<DeleteLinkResponse> {
    const { data } = await this.rest.request<DeleteLinkResponse>(contract.links.deleteLink, {
      ...options,
      params: { id: memoryId },
      query: params,
    });
    return data;
  }
}

/** `client.history.list(...)`: the history query, the owner as {@link OwnerParams}. */
export type SearchHistoryParams = Omit<SearchHistoryQuery, OwnerWireKey> & OwnerParams;

/** Search history (operator routes): `client.history.list / replay`. */
export class History {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Saved searches, newest first (`GET /v1/search/history`): searches sent with
   * `x-save-history: 1`. Filter by owner and `since` (ISO 8601); page with `page`/`page_size`.
   *
   * @example
   * ```ts
   * const { results } = await client.history.list({ ownerId: 'jane', page_size: 10 });
   * ```
   */
  async list(
    params: SearchHistoryParams = {},
    options?: RequestOptions,
  ): Promise<SearchHistoryResponse> {
    const { data } = await this.rest.request<SearchHistoryResponse>(
      contract.history.getSearchHistory,
      { ...options, query: withWireOwner(params) },
    );
    return data;
  }

  /**
   * Runs a saved search again (`POST /v1/search/replay`), metered like a search; the response is
   * a search response with the `query_id`.
   *
   * @example
   * ```ts
   * const { results } = await client.history.replay(history.results[0]!.query_id);
   * ```
   */
  async replay(queryId: string, options?: RequestOptions): Promise<ReplaySearchResponse> {
    const { data } = await this.rest.request<ReplaySearchResponse>(contract.history.replaySearch, {
      ...options,
      body: { query_id: queryId },
    });
    return data;
  }
}

/** `client.pins.update(...)`: pin and unpin, the owner as {@link OwnerParams} (an id is required). */
export type UpdatePinsParams = Omit<UpdatePinsPayload, OwnerWireKey> & OwnerParams;
/** `client.pins.get(...)`: the owner as {@link OwnerParams} (an id is required). */
export type GetPinsParams = OwnerParams;

/** Profile pins (operator routes): `client.pins.get / update`. */
export class Pins {
  constructor(private readonly rest: RestTransport) {}

  /**
   * Pins and unpins memories of an owner (`PATCH /v1/profile/pins`); pinned live memories come
   * first in that owner's context. Returns the owner's pins.
   *
   * @example
   * ```ts
   * const { pins } = await client.pins.update({ ownerId: 'jane', pin: [memoryId] });
   * ```
   */
  async update(params: UpdatePinsParams, options?: RequestOptions): Promise<PinsResponse> {
    const { data } = await this.rest.request<PinsResponse>(contract.pins.updatePins, {
      ...options,
      body: withWireOwner(params),
    });
    return data;
  }

  /** The pinned memories of an owner (`GET /v1/profile/pins`), in pin order. */
  async get(params: GetPinsParams, options?: RequestOptions): Promise<PinsResponse> {
    const { data } = await this.rest.request<PinsResponse>(contract.pins.getPins, {
      ...options,
      query: withWireOwner(params),
    });
    return data;
  }
}

/** `client.audit.log(...)`: filters and paging of `GET /v1/audit/log`. */
export interface AuditLogParams {
  page?: number;
  /** 1 to 200; default 50. */
  page_size?: number;
  /** ISO 8601: rows at or after. */
  from?: string;
  /** ISO 8601: rows before. */
  to?: string;
  /** A route pattern: `/v1/memories/:id` (or `/v1/memories/{id}`). */
  route?: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A status code (`404`) or class (`'4xx'`). */
  status?: number | string;
}

/** Audit log and pruning metrics of the key's workspace (operator routes). */
export class Audit {
  constructor(private readonly rest: RestTransport) {}

  /**
   * The workspace's audit records, newest first (`GET /v1/audit/log`): method, path, route
   * pattern, status, duration, address; never bodies or credentials.
   *
   * @example
   * ```ts
   * const { results, has_more } = await client.audit.log({ status: '4xx', page_size: 20 });
   * ```
   */
  async log(params: AuditLogParams = {}, options?: RequestOptions): Promise<AuditLogPage> {
    const query = Object.fromEntries(
      Object.entries(params).filter(([, value]) => value !== undefined),
    );
    const { data } = await this.rest.request<AuditLogPage>(contract.audit.getAuditLog, {
      ...options,
      query,
    });
    return data;
  }

  /**
   * Memory, duplicate and chunk counts of the workspace (`GET /v1/pruning/metrics`).
   *
   * @example
   * ```ts
   * const { duplicates, chunks } = await client.audit.pruningMetrics();
   * ```
   */
  async pruningMetrics(options?: RequestOptions): Promise<PruningMetrics> {
    const { data } = await this.rest.request<PruningMetrics>(contract.audit.getPruningMetrics, {
      ...options,
    });
    return data;
  }
}

/** Connector settings of the key's workspace (operator routes): `client.connectors.get / update`. */
export class Connectors {
  constructor(private readonly rest: RestTransport) {}

  /** Every connector setting, the defaults until changed (`GET /v1/connectors/settings`). */
  async get(options?: RequestOptions): Promise<ConnectorSettings> {
    const { data } = await this.rest.request<ConnectorSettings>(
      contract.connectors.getConnectorSettings,
      { ...options },
    );
    return data;
  }

  /**
   * Changes some settings and returns them all (`PATCH /v1/connectors/settings`). Fields merge
   * one by one; `allowed_sources` and `default_metadata` are replaced whole.
   *
   * @example
   * ```ts
   * await client.connectors.update({ webhook: { enabled: true, allowed_sources: ['zendesk'] } });
   * ```
   */
  async update(
    patch: ConnectorSettingsPatch,
    options?: RequestOptions,
  ): Promise<ConnectorSettings> {
    const { data } = await this.rest.request<ConnectorSettings>(
      contract.connectors.updateConnectorSettings,
      { ...options, body: patch },
    );
    return data;
  }
}

import type {
  CLIENT_OWNER_TYPES,
  ContextResponse,
  ListMemoriesQuery,
  MemoryInsertPayload,
  Metadata,
  OwnerIdAlias,
  OwnerTypeAlias,
  SearchPayload,
  SearchResponse,
  UsageResponse,
} from '@mnemo/contract';

/** An owner type as the client accepts it: the contract's, plus the legacy `agent` (= `app`). */
export type OwnerTypeInput = (typeof CLIENT_OWNER_TYPES)[number];

/**
 * Whose memories a call is about. Prefer `ownerId` + `ownerType`; the legacy names (`userId`,
 * `entityId`, `entityType`) and the wire names (`owner_id`, `user_id`, `entity_id`, `owner_type`,
 * `entity_type`) are accepted too. Every id given must be the same string, or the call fails with
 * `InvalidOwnerIdError` (code `INVALID_OWNER_ID`) before any request; `agent` becomes `app`.
 */
export interface OwnerParams {
  /** Your end user's id (or a team or app id). Omit for app-wide memories. */
  ownerId?: string | undefined;
  /** `user` (the server's default when an id is given), `team` or `app`; `agent` means `app`. */
  ownerType?: OwnerTypeInput | undefined;
  /** Legacy alias of `ownerId`. */
  userId?: string | undefined;
  /** Legacy alias of `ownerId`. */
  entityId?: string | undefined;
  /** Legacy alias of `ownerType`. */
  entityType?: OwnerTypeInput | undefined;
  /** Wire alias of `ownerId`. */
  owner_id?: string | undefined;
  /** Wire alias of `ownerId`. */
  user_id?: string | undefined;
  /** Wire alias of `ownerId`. */
  entity_id?: string | undefined;
  /** Wire alias of `ownerType`. */
  owner_type?: OwnerTypeInput | undefined;
  /** Wire alias of `ownerType`. */
  entity_type?: OwnerTypeInput | undefined;
}

/** The owner fields of the wire payloads, replaced by {@link OwnerParams} in the client's params. */
type OwnerWireKeys = OwnerIdAlias | OwnerTypeAlias;

/** `client.memories.add(...)`: the insert payload of `POST /v1/memories` with {@link OwnerParams}. */
export type AddMemoryParams = Omit<MemoryInsertPayload, OwnerWireKeys> & OwnerParams;

/** `client.search.query(...)` and `client.context.get(...)`: the search payload with {@link OwnerParams}. */
export type SearchParams = Omit<SearchPayload, OwnerWireKeys> & OwnerParams;

/** `client.memories.list(...)`: the list query, `metadata` as an object (it is JSON-encoded for you). */
export type ListMemoriesParams = Omit<ListMemoriesQuery, OwnerWireKeys | 'metadata'> &
  OwnerParams & { metadata?: Metadata | undefined };

/**
 * A search response. `request_id` is the server's id of the call (the `x-request-id` header on
 * REST, the tool result's `request_id` over MCP): pass it to `client.feedback.send`. The shape is
 * the same whichever transport served the call.
 */
export type SearchResult = SearchResponse & { request_id?: string | undefined };

/** A context response; `request_id` as in {@link SearchResult}. */
export type ContextResult = ContextResponse & { request_id?: string | undefined };

/** The ways `client.search` and `client.context` can travel (the `transport` option). */
export const TRANSPORT_KINDS = ['mcp', 'rest', 'hybrid'] as const;

/** Which way `client.search` and `client.context` travel. */
export type TransportKind = (typeof TRANSPORT_KINDS)[number];

/**
 * `GET /v1/usage/today`: the contract's usage response (today's consumption, effective limits,
 * cap alerts, operational mode).
 */
export type UsageToday = UsageResponse;
export type { UsageCapAlert, UsageResource } from '@mnemo/contract';

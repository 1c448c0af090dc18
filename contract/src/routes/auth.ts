/**
 * How a route authenticates, carried in each route's `metadata.auth`: the server picks each
 * route's guard from it and the OpenAPI document states it as the operation's `security`.
 *
 * - `public`: no credentials (the spec's P): health and readiness.
 * - `api_key_or_session`: a tenant route (the spec's "K or S"). This server accepts an API key,
 *   `Authorization: Bearer <key>` or `x-api-key: <key>`; it has no dashboard sessions yet.
 *   POST /v1/memories also takes the spec's internal subrequest (I); the server binds that to the
 *   route itself, it is not a mode of its own here. A browser may use a dashboard session instead
 *   (cookie `svc_dash_session`, plus `x-csrf-token` on unsafe methods).
 * - `dashboard_token`: an identity-provider access token (JWT) in the body (dashboard bootstrap
 *   and session creation, the spec's rule 1).
 * - `dashboard_session`: the spec's S: the session cookie; unsafe methods also need `x-csrf-token`.
 * - `admin_token`: an operator route (the spec's A): `x-admin-token`, the configured token itself or
 *   its HMAC-signed form; optional IP allowlist and break-glass (docs/operator.md).
 * - `admin_api_key`: an API key whose scope is `admin` (POST /v1/workspaces); a tenant-scoped key
 *   is refused with 403. Sent like a tenant key; no dashboard session.
 * - `payment_callback`: the payment provider's callback (the spec's H): no API key; the route
 *   itself verifies the provider's signature over the form body (see docs/billing.md).
 */
export type RouteAuth =
  | 'public'
  | 'api_key_or_session'
  | 'admin_token'
  | 'admin_api_key'
  | 'payment_callback'
  | 'dashboard_token'
  | 'dashboard_session';

/**
 * What an operation's AI-provider cost is estimated from before it runs, so that the cost burst
 * and the global AI budget can refuse it up front. The server prices each kind from its own
 * provider settings; the contract only names the kind.
 *
 * - `write`: the memory text embedded, and extracted when extraction is on for it;
 * - `query`: the query embedded once (nothing for a keyword search);
 * - `ingest`, `conversation`: every item of the request, as writes;
 * - `replay`: a saved search run again, as a query.
 */
export type CostKind = 'write' | 'query' | 'ingest' | 'conversation' | 'replay';

/** The plan resources an operation meters (the usage report's names). */
export type QuotaResource =
  | 'writes'
  | 'reads'
  | 'embeds'
  | 'embed_tokens'
  | 'extraction_calls'
  | 'gen_tokens'
  | 'storage_bytes';

/**
 * When an operation's audit record is written:
 * - `with_write`: in the transaction that stores what it wrote (a replayed write, which stores
 *   nothing, is recorded once it ends);
 * - `after`: once the operation ends, with its outcome.
 */
export type AuditMode = 'with_write' | 'after';

/** The domain events an operation may emit, by name. */
export type DomainEventName =
  | 'memory.created'
  | 'memory.deduped'
  | 'memory.superseded'
  | 'memory.merged'
  | 'memory.deleted'
  | 'search.feedback'
  | 'owner.erased';

export interface RouteMetadata {
  auth: RouteAuth;
  /**
   * An operator route: outside the published contract (spec: "Operator routes ... are not part of
   * the published contract") and free to change without notice. Tagged `operator` in OpenAPI.
   */
  operator?: boolean;
  /**
   * The route also takes the spec's internal subrequest (I: `x-internal-mcp: 1` with the internal
   * secret, for the workspace in `x-workspace-id`). Spec rule 2 allows it on POST /v1/memories only.
   */
  internalSubrequest?: boolean;
  /** The route spends AI-provider money: its estimate's kind (absent: it costs nothing). */
  cost?: CostKind;
  /** The plan resources the route meters. */
  quota?: readonly QuotaResource[];
  /** How the route's audit record is written (absent: one record per request, when it ends). */
  audit?: AuditMode;
  /** The domain events the route's operation may emit. */
  events?: readonly DomainEventName[];
  /** The MCP tool that runs the same operation, when there is one. */
  mcpTool?: string;
  /**
   * The request body's media type when it is not JSON (an import's JSON Lines): the server
   * reads the body as text for it, and the OpenAPI document states it.
   */
  requestContentType?: string;
}

/** A route's metadata, typed (ts-rest keeps it as `unknown`). */
export function routeMetadata(route: { metadata?: unknown }): RouteMetadata {
  return (route.metadata as RouteMetadata | undefined) ?? { auth: 'api_key_or_session' };
}

/** Metadata of a public route. */
export const PUBLIC = { auth: 'public' } as const satisfies RouteMetadata;
/** Metadata of a tenant route: an API key names the workspace. */
export const TENANT = { auth: 'api_key_or_session' } as const satisfies RouteMetadata;
/**
 * Metadata of a tenant operator route (conversation and generic ingest, ...): an API key or a
 * session names the workspace, like {@link TENANT}, but the route is outside the published contract.
 */
export const TENANT_OPERATOR = {
  auth: 'api_key_or_session',
  operator: true,
} as const satisfies RouteMetadata;
/** Metadata of an operator route behind the admin token. */
export const ADMIN = { auth: 'admin_token', operator: true } as const satisfies RouteMetadata;
/** Metadata of an operator route that needs an admin-scoped API key. */
export const ADMIN_API_KEY = {
  auth: 'admin_api_key',
  operator: true,
} as const satisfies RouteMetadata;
/** Metadata of the payment callback: signed by the provider, no API key. */
export const PAYMENT_CALLBACK = { auth: 'payment_callback' } as const satisfies RouteMetadata;
/** Metadata of dashboard bootstrap and session creation: a JWT in the body. */
export const DASHBOARD_TOKEN = { auth: 'dashboard_token' } as const satisfies RouteMetadata;
/** Metadata of a dashboard route behind the session cookie (and CSRF on mutations). */
export const DASHBOARD_SESSION = { auth: 'dashboard_session' } as const satisfies RouteMetadata;

/**
 * The policies every route that stores memories through the write pipeline shares: what it
 * meters, that its audit record is written in the write's transaction, the events it may emit.
 */
export const MEMORY_WRITE = {
  quota: ['writes', 'storage_bytes', 'embeds', 'embed_tokens', 'extraction_calls', 'gen_tokens'],
  audit: 'with_write',
  events: ['memory.created', 'memory.deduped', 'memory.superseded', 'memory.merged'],
} as const satisfies Partial<RouteMetadata>;

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

export interface RouteMetadata {
  auth: RouteAuth;
  /**
   * An operator route: outside the published contract (spec: "Operator routes ... are not part of
   * the published contract") and free to change without notice. Tagged `operator` in OpenAPI.
   */
  operator?: boolean;
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

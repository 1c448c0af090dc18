/**
 * How a route authenticates, carried in each route's `metadata.auth`: the server picks each
 * route's guard from it and the OpenAPI document states it as the operation's `security`.
 *
 * - `public`: no credentials (the spec's P): health and readiness.
 * - `api_key_or_session`: a tenant route (the spec's "K or S"). This server accepts an API key,
 *   `Authorization: Bearer <key>` or `x-api-key: <key>`; it has no dashboard sessions yet.
 *   POST /v1/memories also takes the spec's internal subrequest (I); the server binds that to the
 *   route itself, it is not a mode of its own here.
 * - `admin_token`: an operator route (the spec's A): `x-admin-token` equal to the configured token.
 */
export type RouteAuth = 'public' | 'api_key_or_session' | 'admin_token';

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
/** Metadata of an operator route behind the admin token. */
export const ADMIN = { auth: 'admin_token', operator: true } as const satisfies RouteMetadata;

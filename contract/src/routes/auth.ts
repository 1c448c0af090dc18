/**
 * How a route authenticates, carried in each route's `metadata.auth` so the server enforces it
 * per route and the OpenAPI document states it. `P` public, `K` API key, `S` dashboard session.
 */
export type RouteAuth = 'public' | 'api_key_or_session';

export interface RouteMetadata {
  auth: RouteAuth;
}

export const PUBLIC = { auth: 'public' } as const satisfies RouteMetadata;
export const TENANT = { auth: 'api_key_or_session' } as const satisfies RouteMetadata;

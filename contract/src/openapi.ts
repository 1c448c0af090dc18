import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import { CONTRACT_VERSION, contract } from './contract.js';
import { withNamedSchemas } from './openapi-schemas.js';
import type { RouteAuth, RouteMetadata } from './routes/auth.js';

/** Every route of a (nested) router, flattened. */
export function listRoutes(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((entry) =>
    isAppRoute(entry) ? [entry] : listRoutes(entry as AppRouter),
  );
}

export function routeAuth(route: AppRoute): RouteMetadata['auth'] {
  return (route.metadata as RouteMetadata | undefined)?.auth ?? 'api_key_or_session';
}

/** Whether a route is an operator route, outside the published contract. */
export function isOperatorRoute(route: AppRoute): boolean {
  return (route.metadata as RouteMetadata | undefined)?.operator === true;
}

/** The OpenAPI tag of operator routes. */
export const OPERATOR_TAG = 'operator';

const SECURITY: Record<RouteAuth, Array<Record<string, string[]>>> = {
  public: [],
  api_key_or_session: [{ bearerAuth: [] }, { apiKeyHeader: [] }, { dashboardSession: [] }],
  admin_token: [{ adminToken: [] }],
  // An API key of scope `admin`.
  admin_api_key: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  // Signed by the provider over the body: no credential a client sends.
  payment_callback: [],
  // The identity provider's JWT travels in the body.
  dashboard_token: [],
  dashboard_session: [{ dashboardSession: [] }],
};

/** The OpenAPI 3 document of the contract; never written by hand. */
export function buildOpenApiDocument() {
  const document = generateOpenApi(
    contract,
    {
      info: {
        title: 'Mnemo memory service',
        version: CONTRACT_VERSION,
        description: 'Memories, hybrid search and prompt-ready context for customer-facing AI.',
        license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
      },
      servers: [
        {
          url: 'http://127.0.0.1:8787',
          description: 'A server started with the default HOST and PORT',
        },
      ],
      tags: [
        {
          name: OPERATOR_TAG,
          description:
            'Operator routes: not part of the published contract; they may change without notice.',
        },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          dashboardSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'svc_dash_session',
            description: 'Dashboard session; unsafe methods also need header x-csrf-token',
          },
          adminToken: {
            type: 'apiKey',
            in: 'header',
            name: 'x-admin-token',
            description: 'The operator token (MNEMO_ADMIN_TOKEN)',
          },
        },
      },
    },
    {
      setOperationId: true,
      operationMapper: (operation, route) => ({
        ...operation,
        security: SECURITY[routeAuth(route)],
        ...(isOperatorRoute(route)
          ? { tags: [...(operation.tags ?? []), OPERATOR_TAG], 'x-operator': true }
          : {}),
      }),
    },
  );
  return withNamedSchemas(document);
}

import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import { CONTRACT_VERSION, contract } from './contract.js';
import type { RouteMetadata } from './routes/auth.js';

/** Every route of a (nested) router, flattened. */
export function listRoutes(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((entry) =>
    isAppRoute(entry) ? [entry] : listRoutes(entry as AppRouter),
  );
}

export function routeAuth(route: AppRoute): RouteMetadata['auth'] {
  return (route.metadata as RouteMetadata | undefined)?.auth ?? 'api_key_or_session';
}

const TENANT_SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** The OpenAPI 3 document of the contract; never written by hand. */
export function buildOpenApiDocument() {
  const document = generateOpenApi(
    contract,
    {
      info: {
        title: 'Mnemo memory service',
        version: CONTRACT_VERSION,
        description: 'Memories, hybrid search and prompt-ready context for customer-facing AI.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        },
      },
    },
    {
      setOperationId: true,
      operationMapper: (operation, route) => ({
        ...operation,
        security: routeAuth(route) === 'public' ? [] : TENANT_SECURITY,
      }),
    },
  );
  return document;
}

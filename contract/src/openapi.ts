import { isAppRoute, isAppRouteOtherResponse, type AppRoute, type AppRouter } from '@ts-rest/core';
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

/**
 * ts-rest states every body as JSON (or a form); a route whose metadata names another media
 * type (an import's JSON Lines) gets its body under that type instead.
 */
function requestBodyOf<T extends { requestBody?: object }>(operation: T, route: AppRoute): T {
  const type = (route.metadata as RouteMetadata | undefined)?.requestContentType;
  const body = operation.requestBody;
  if (type === undefined || body === undefined || !('content' in body)) return operation;
  const [media] = Object.values(body.content as Record<string, object>);
  return { ...operation, requestBody: { ...body, content: { [type]: media ?? {} } } };
}

/**
 * ts-rest leaves a non-JSON response (`c.otherResponse`, the export's JSON Lines) without
 * content; here it gets its media type and the schema's description.
 */
function otherResponsesOf<T extends { responses?: object }>(operation: T, route: AppRoute): T {
  const responses = { ...(operation.responses as Record<string, object> | undefined) };
  let changed = false;
  for (const [status, response] of Object.entries(route.responses)) {
    if (!isAppRouteOtherResponse(response)) continue;
    const body = response.body as { description?: string } | undefined;
    responses[status] = {
      description: body?.description ?? status,
      content: { [response.contentType]: { schema: { type: 'string' } } },
    };
    changed = true;
  }
  return changed ? { ...operation, responses } : operation;
}

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
        ...otherResponsesOf(requestBodyOf(operation, route), route),
        security: SECURITY[routeAuth(route)],
        ...(isOperatorRoute(route)
          ? { tags: [...(operation.tags ?? []), OPERATOR_TAG], 'x-operator': true }
          : {}),
      }),
    },
  );
  return withNamedSchemas(document);
}

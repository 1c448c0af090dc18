import { buildOpenApiDocument, contract } from '@mnemo/contract';
import express, { type Express } from 'express';
import { apiKeyAuth } from './http/auth.js';
import { bodyLimit, jsonBody } from './http/body.js';
import { completion } from './http/completion.js';
import { errorHandler, notFound } from './http/error-handler.js';
import { methodGuard } from './http/method-guard.js';
import { mountContract } from './http/mount.js';
import { originPolicy } from './http/origin.js';
import { requestId } from './http/request-id.js';
import { RouteTable } from './http/route-table.js';
import type { AppDeps } from './deps.js';
import { mcpRoutes } from './mcp/http.js';
import { MCP_PATH_VARIANTS, isMcpPath } from './mcp/paths.js';
import { healthRoutes } from './routes/health.js';
import { mountMemoryRoutes } from './routes/memories.js';
import { mountSearchRoutes } from './routes/search.js';
import { mountAdminRoutes } from './routes/admin.js';

export { MCP_PATHS } from './mcp/paths.js';

/**
 * The whole HTTP application, without listening. Middleware order is the spec's request order:
 * request id → health → Origin → OPTIONS → body size → 405 → (MCP paths: IP rate limit → MCP
 * handler) → auth per route → handler or 404,
 * with the audit record and completion log registered first so that they see every outcome.
 */
export function createApp(deps: AppDeps): Express {
  const { config } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  const table = new RouteTable();
  app.use(requestId());
  app.use(completion(deps));

  const healthRouter = express.Router();
  mountContract(healthRouter, table, contract.health, healthRoutes(deps));
  app.use(healthRouter);

  app.use(
    originPolicy({ allowedOrigins: config.allowedOrigins, exemptPaths: MCP_PATH_VARIANTS, table }),
  );
  app.use(bodyLimit({ maxBytes: config.maxBodyBytes }));
  // MCP reads its own body: malformed JSON there is a JSON-RPC parse error, not the REST envelope.
  const json = jsonBody({ maxBytes: config.maxBodyBytes });
  app.use((req, res, next) => (isMcpPath(req.path) ? next() : json(req, res, next)));
  app.use(methodGuard(table));
  app.use(mcpRoutes(deps, table));

  const api = express.Router();
  const openApiDocument = buildOpenApiDocument();
  table.add('GET', '/v1/openapi.json');
  api.get('/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  const tenant = [
    apiKeyAuth({
      apiKeys: deps.apiKeys,
      internal: { secret: config.internalSecret, db: deps.database.db },
    }),
  ];
  mountMemoryRoutes(api, table, deps, tenant);
  mountSearchRoutes(api, table, deps, tenant);
  mountAdminRoutes(api, table, deps);
  app.use(api);

  app.use(notFound());
  app.use(errorHandler({ logger: deps.logger, maxBodyBytes: config.maxBodyBytes }));
  return app;
}

import { buildOpenApiDocument } from '@mnemo/contract';
import express, { type Express, type RequestHandler } from 'express';
import { apiKeyAuth } from './http/auth.js';
import { bodyLimit, jsonBody } from './http/body.js';
import { completion } from './http/completion.js';
import { errorHandler, notFound } from './http/error-handler.js';
import { deadlineFence, requestDeadline } from './http/deadline.js';
import { methodGuard } from './http/method-guard.js';
import { isLoopbackHost, originPolicy } from './http/origin.js';
import { requestId } from './http/request-id.js';
import { RouteTable } from './http/route-table.js';
import { storableInput } from './http/validation.js';
import type { AppDeps } from './deps.js';
import { clientRateLimit, tenantLimits } from './http/limits.js';
import { clientAddressKey } from './http/rate-limit.js';
import { PLANS } from '@mnemo/contract';
import { mcpRoutes } from './mcp/http.js';
import { McpSessionStore } from './mcp/sessions.js';
import { openRedis } from './limits/redis.js';
import type { RedisConnection } from './config.js';
import { MCP_PATH_VARIANTS, isMcpPath } from './mcp/paths.js';
import { mountHealthRoutes } from './routes/health.js';
import { mountMemoryRoutes } from './routes/memories.js';
import { mountIngestRoutes } from './routes/ingest.js';
import { mountLinkRoutes } from './routes/links.js';
import { mountHistoryRoutes } from './routes/history.js';
import { mountPinRoutes } from './routes/pins.js';
import { mountOwnerDataRoutes } from './routes/owner-data.js';
import { mountWebhookRoutes } from './routes/webhooks.js';
import { mountSearchRoutes } from './routes/search.js';
import { mountUsageRoutes } from './routes/usage.js';
import { mountBillingRoutes } from './routes/billing.js';
import { mountAdminRoutes } from './routes/admin.js';
import { mountApiKeyRoutes } from './routes/api-keys.js';
import { mountAuditRoutes } from './routes/audit.js';
import { mountConnectorRoutes } from './routes/connectors.js';
import { mountWorkspaceRoutes } from './routes/workspaces.js';
import { mountDashboardRoutes } from './routes/dashboard.js';
import { adminAuth } from './http/admin-auth.js';
import { consoleRoutes } from './http/console.js';

export { MCP_PATHS } from './mcp/paths.js';

/**
 * Hosted-MCP sessions, bounded by idle time (and by count in memory): in Redis when one is
 * configured, so that every instance knows every session; their open streams end on shutdown.
 */
export function mcpSessionStore({ config, logger }: Pick<AppDeps, 'config' | 'logger'>) {
  return new McpSessionStore({
    ttlMs: config.mcp.sessionTtlMs,
    maxSessions: config.mcp.maxSessions,
    logger,
    redis: config.redis ? mcpSessionRedis(config.redis) : undefined,
  });
}

/**
 * Session lookups wait for Redis while it reconnects (a failover takes seconds), each bounded,
 * rather than failing at once as limit checks do: a session is not something to fail open on.
 */
function mcpSessionRedis(connection: RedisConnection) {
  const client = openRedis(connection, {
    commandTimeout: 2_000,
    maxRetriesPerRequest: 2,
    connectTimeout: 2_000,
  });
  client.on('error', () => {
    // Reported by the failing lookups (503); without a listener ioredis prints to stderr.
  });
  return client;
}

/**
 * The whole HTTP application, without listening. Middleware order is the spec's request order:
 * request id → health → Origin → OPTIONS → body size → 405 → (MCP paths: IP rate limit → MCP
 * handler) → auth per route → handler or 404,
 * with the audit record and completion log registered first so that they see every outcome.
 */
export function createApp(
  deps: AppDeps,
  mcpSessions: McpSessionStore = mcpSessionStore(deps),
): Express {
  const { config, operations } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  const table = new RouteTable();
  app.use(requestId());
  app.use(completion(deps));
  // After the completion log, so it records the deadline's 503. MCP streams stay open on purpose;
  // operator maintenance routes (hygiene, retention, reconcile) may run long by design.
  app.use(
    requestDeadline({
      ms: config.requestDeadlineMs,
      skip: (path) =>
        isMcpPath(path) || path.startsWith('/admin/') || path.startsWith('/v1/admin/'),
    }),
  );

  const healthRouter = express.Router();
  mountHealthRoutes(healthRouter, table, operations);
  app.use(healthRouter);
  app.use(consoleRoutes({ dir: config.dashboard.consoleDir }));

  app.use(
    originPolicy({
      allowedOrigins: config.allowedOrigins,
      // Local MCP tools (an inspector on localhost) reach a loopback-bound server without listing.
      mcp: { paths: MCP_PATH_VARIANTS, allowLocalhost: isLoopbackHost(config.host) },
      table,
    }),
  );
  app.use(bodyLimit({ maxBytes: config.maxBodyBytes }));
  // MCP reads its own body: malformed JSON there is a JSON-RPC parse error, not the REST envelope.
  const json = jsonBody({ maxBytes: config.maxBodyBytes });
  app.use((req, res, next) => (isMcpPath(req.path) ? next() : json(req, res, next)));
  app.use(methodGuard(table));
  // The text rule on every parsed REST input (MCP checks its tool arguments itself).
  const storable = storableInput();
  app.use((req, res, next) => (isMcpPath(req.path) ? next() : storable(req, res, next)));
  const limits = requestLimits(deps);
  app.use(
    mcpRoutes(
      {
        operations,
        apiKeys: deps.apiKeys,
        sessions: mcpSessions,
        limits: deps.limits,
        logger: deps.logger,
        settings: {
          version: config.version,
          rateLimitPerMinute: config.mcp.rateLimitPerMinute,
          maxBodyBytes: config.maxBodyBytes,
        },
      },
      table,
      limits,
    ),
  );

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
      sessions: deps.dashboard.sessions,
    }),
    ...limits,
    // Last: a request the deadline answered while it waited above does not run its handler.
    deadlineFence(),
  ];
  mountMemoryRoutes(api, table, operations, tenant);
  mountIngestRoutes(api, table, operations, tenant);
  mountAuditRoutes(api, table, operations, tenant);
  mountConnectorRoutes(api, table, operations, tenant);
  mountWorkspaceRoutes(api, table, operations, tenant);
  mountLinkRoutes(api, table, operations, tenant);
  mountHistoryRoutes(api, table, operations, tenant);
  mountPinRoutes(api, table, operations, tenant);
  mountOwnerDataRoutes(api, table, operations, tenant, {
    logger: deps.logger,
    maxBodyBytes: config.maxBodyBytes,
  });
  mountWebhookRoutes(api, table, operations, tenant);
  mountSearchRoutes(api, table, operations, tenant);
  mountUsageRoutes(api, table, operations, tenant);
  mountBillingRoutes(
    api,
    table,
    {
      operations,
      verifyCallback: (callback) => deps.billing.verifySignature(callback),
      maxBodyBytes: config.maxBodyBytes,
    },
    tenant,
  );
  // Sign-in and session routes take tokens from anyone: bound them per client address.
  const dashboardLimits = config.limits.enabled
    ? [
        clientRateLimit({
          backend: deps.limits,
          name: 'dashboard-ip',
          limit: config.dashboard.rateLimitPerMinute,
          key: clientAddressKey,
          describe: `${config.dashboard.rateLimitPerMinute} dashboard requests per minute per client address`,
          logger: deps.logger,
        }),
        deadlineFence(),
      ]
    : [deadlineFence()];
  mountDashboardRoutes(api, table, operations, deps.dashboard.sessions, dashboardLimits);
  // One guard for every admin-token route, so a signed token's nonce is remembered across them.
  const adminGuard = adminAuth({
    token: config.adminToken,
    ipAllowlist: config.adminAuth.ipAllowlist,
    breakGlassUntil: config.adminAuth.breakGlassUntil,
    maxSkewSeconds: config.adminAuth.hmacMaxSkewSeconds,
    limits: deps.limits,
    logger: deps.logger,
  });
  mountAdminRoutes(api, table, operations, adminGuard);
  mountApiKeyRoutes(api, table, operations, adminGuard);
  app.use(api);

  app.use(notFound());
  app.use(errorHandler({ logger: deps.logger, maxBodyBytes: config.maxBodyBytes }));
  return app;
}

/** Requests an operator key may make per minute in its first 48 hours (the spec's Limits). */
const INTRODUCTORY_KEY_RPM = 15;

/**
 * The spec's request limits on tenant routes, after auth: per key and per workspace requests per
 * minute and in-flight leases, counted per HTTP request on both doors. The AI-cost limits are
 * an operation's policy (operations/policy.ts), charged per operation whichever door it came
 * through. `MNEMO_LIMITS=off` turns them all off.
 */
function requestLimits(deps: AppDeps): RequestHandler[] {
  const { config, limits: backend, logger, plans } = deps;
  if (!config.limits.enabled) return [];
  const rates = config.rateLimits;
  return [
    tenantLimits({
      backend,
      keyRpm: (auth) =>
        auth.introductoryUntil !== undefined && auth.introductoryUntil > Date.now()
          ? Math.min(INTRODUCTORY_KEY_RPM, rates.keyPerMinute)
          : rates.keyPerMinute,
      // Without waiting while the plan's cached read is fresh (nearly every request).
      workspaceRpm: (workspaceId) =>
        rates.workspacePerMinute ??
        plans.cached(workspaceId)?.plan.workspaceRpm ??
        plans.resolve(workspaceId).then(
          (plan) => plan.plan.workspaceRpm,
          // Unverifiable entitlement: the metered routes refuse writes; the rate stays bounded.
          () => (plans.lastKnown(workspaceId)?.plan ?? PLANS.launch).workspaceRpm,
        ),
      inFlight: { limit: rates.inFlightPerWorkspace, ttlMs: rates.inFlightLeaseMs },
      logger,
    }),
  ];
}

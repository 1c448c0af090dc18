import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { AppDeps } from '../deps.js';
import { adminAuth } from '../http/admin-auth.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import { runHygiene } from '../jobs/hygiene.js';
import { runRetention } from '../jobs/retention.js';
import { reconcileUsage } from '../services/usage.js';
import { billingServiceOf } from './billing.js';
import { dashboardDepsOf } from './dashboard.js';

const s = initServer();

/**
 * Operator routes (outside the published contract), guarded by the admin token. The guard runs
 * before the query is validated: without the token a caller learns nothing about the route.
 */
export function mountAdminRoutes(target: IRouter, table: RouteTable, deps: AppDeps): void {
  const billing = billingServiceOf(deps);
  const retention = { db: deps.database.db, plans: deps.plans, logger: deps.logger };
  const implementation = s.router(contract.admin, {
    runMemoryHygiene: async ({ query }) => ({
      status: 200,
      body: await runHygiene(deps.database.db, {
        dryRun: query.dry_run,
        limit: query.limit,
        ...(query.workspace_id ? { workspaceId: query.workspace_id } : {}),
        nearThreshold: deps.config.dedupe.nearThreshold,
      }),
    }),
    runMemoryRetention: async ({ query }) => ({
      status: 200,
      body: await runRetention(retention, {
        dryRun: query.dry_run,
        limit: query.limit,
        ...(query.workspace_id ? { workspaceId: query.workspace_id } : {}),
        limitsEnabled: deps.config.limits.enabled,
      }),
    }),
    reconcileUsage: async () => ({ status: 200, body: await reconcileUsage(deps.database.db) }),
    reprocessWebhooks: async ({ query }) => ({
      status: 200,
      body: await billing.reprocess({ limit: query.limit, force: true }),
    }),
    getBillingHealth: async () => ({ status: 200, body: await billing.health() }),
    setCancelAtPeriodEnd: async ({ body }) => ({
      status: 200,
      body: await billing.setCancelAtPeriodEnd(body.workspace_id, body.cancel_at_period_end),
    }),
    cleanupDashboardSessions: async () => ({
      status: 200,
      body: { deleted: await dashboardDepsOf(deps).sessions.cleanup() },
    }),
  });
  mountContract(target, table, contract.admin, implementation, [adminGuard(deps)]);
}

/**
 * The guard of every admin-token route (`/admin/*`, `/v1/admin/*`, `/v1/api-keys*`): the token or
 * its signed form, the IP allowlist and break-glass, as configured. One per app, so a signed
 * token's nonce is remembered across all of them.
 */
export function adminGuard(deps: AppDeps): RequestHandler {
  const cached = guards.get(deps);
  if (cached) return cached;
  const guard = adminAuth({
    token: deps.config.adminToken,
    ipAllowlist: deps.config.adminAuth.ipAllowlist,
    breakGlassUntil: deps.config.adminAuth.breakGlassUntil,
    maxSkewSeconds: deps.config.adminAuth.hmacMaxSkewSeconds,
    limits: deps.limits,
    logger: deps.logger,
  });
  guards.set(deps, guard);
  return guard;
}
const guards = new WeakMap<AppDeps, RequestHandler>();

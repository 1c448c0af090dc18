import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { mountContract } from '../http/mount.js';
import type { RouteTable } from '../http/route-table.js';
import type { JobSchedule } from '../jobs/catalogue.js';
import { runHygiene } from '../jobs/hygiene.js';
import { scheduledJobsReport } from '../jobs/status.js';
import { runRetention } from '../jobs/retention.js';
import type { Logger } from '../logger.js';
import type { BillingService } from '../services/billing.js';
import type { PlanService } from '../services/plans.js';
import type { DashboardSessions } from '../services/dashboard/sessions.js';
import { reconcileUsage } from '../services/usage/index.js';

/** What the operator routes run. */
export interface AdminRouteDeps {
  db: Database;
  plans: PlanService;
  logger: Logger;
  billing: BillingService;
  /** Dashboard sessions, whose expired rows an operator may clean up. */
  sessions: DashboardSessions;
  /** `jobBudgetMs`: the wall-clock budget of one hygiene or retention run. */
  settings: { nearThreshold: number; limitsEnabled: boolean; jobBudgetMs: number };
  /** The scheduled jobs and which runner runs them (GET /v1/admin/jobs). */
  jobs: { schedules: JobSchedule[]; runner: 'pg-boss' | 'in-process' };
  /** The app's one admin guard (a signed token's nonce is remembered across its routes). */
  guard: RequestHandler;
}

const s = initServer();

/**
 * Operator routes (outside the published contract), guarded by the admin token. The guard runs
 * before the query is validated: without the token a caller learns nothing about the route.
 */
export function mountAdminRoutes(
  target: IRouter,
  table: RouteTable,
  { db, plans, logger, billing, sessions, settings, jobs, guard }: AdminRouteDeps,
): void {
  const retention = { db, plans, logger };
  const implementation = s.router(contract.admin, {
    runMemoryHygiene: async ({ query }) => ({
      status: 200,
      body: await runHygiene(db, {
        dryRun: query.dry_run,
        limit: query.limit,
        ...(query.workspace_id ? { workspaceId: query.workspace_id } : {}),
        nearThreshold: settings.nearThreshold,
        budgetMs: settings.jobBudgetMs,
      }),
    }),
    runMemoryRetention: async ({ query }) => ({
      status: 200,
      body: await runRetention(retention, {
        dryRun: query.dry_run,
        limit: query.limit,
        ...(query.workspace_id ? { workspaceId: query.workspace_id } : {}),
        limitsEnabled: settings.limitsEnabled,
        budgetMs: settings.jobBudgetMs,
      }),
    }),
    reconcileUsage: async () => ({ status: 200, body: await reconcileUsage(db) }),
    reprocessWebhooks: async ({ query }) => ({
      status: 200,
      body: await billing.reprocess({ limit: query.limit, force: true }),
    }),
    getBillingHealth: async () => ({ status: 200, body: await billing.health() }),
    setCancelAtPeriodEnd: async ({ body }) => ({
      status: 200,
      body: await billing.setCancelAtPeriodEnd(body.workspace_id, body.cancel_at_period_end),
    }),
    listScheduledJobs: async () => ({ status: 200, body: await scheduledJobsReport(db, jobs) }),
    cleanupDashboardSessions: async () => ({
      status: 200,
      body: { deleted: await sessions.cleanup() },
    }),
  });
  mountContract(target, table, contract.admin, implementation, [guard]);
}

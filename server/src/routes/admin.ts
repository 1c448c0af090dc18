import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { operatorCallerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

/** The operations behind the operator routes. */
export type AdminOperations = Pick<
  Operations,
  | 'runMemoryHygiene'
  | 'runMemoryRetention'
  | 'reconcileUsage'
  | 'reprocessWebhooks'
  | 'getBillingHealth'
  | 'setCancelAtPeriodEnd'
  | 'listScheduledJobs'
  | 'cleanupDashboardSessions'
>;

const s = initServer();

/**
 * Operator routes (outside the published contract), guarded by the admin token. The guard runs
 * before the query is validated: without the token a caller learns nothing about the route.
 */
export function mountAdminRoutes(
  target: IRouter,
  table: RouteTable,
  operations: AdminOperations,
  /** The app's one admin guard (a signed token's nonce is remembered across its routes). */
  guard: RequestHandler,
): void {
  const implementation = s.router(contract.admin, {
    runMemoryHygiene: async ({ req, query }) => ({
      status: 200,
      body: await operations.runMemoryHygiene(operatorCallerOf(req), query),
    }),
    runMemoryRetention: async ({ req, query }) => ({
      status: 200,
      body: await operations.runMemoryRetention(operatorCallerOf(req), query),
    }),
    reconcileUsage: async ({ req }) => ({
      status: 200,
      body: await operations.reconcileUsage(operatorCallerOf(req), undefined),
    }),
    reprocessWebhooks: async ({ req, query }) => ({
      status: 200,
      body: await operations.reprocessWebhooks(operatorCallerOf(req), query),
    }),
    listScheduledJobs: async ({ req }) => ({
      status: 200,
      body: await operations.listScheduledJobs(operatorCallerOf(req), undefined),
    }),
    getBillingHealth: async ({ req }) => ({
      status: 200,
      body: await operations.getBillingHealth(operatorCallerOf(req), undefined),
    }),
    setCancelAtPeriodEnd: async ({ req, body }) => ({
      status: 200,
      body: await operations.setCancelAtPeriodEnd(operatorCallerOf(req), body),
    }),
    cleanupDashboardSessions: async ({ req }) => ({
      status: 200,
      body: await operations.cleanupDashboardSessions(operatorCallerOf(req), undefined),
    }),
  });
  mountContract(target, table, contract.admin, implementation, [guard]);
}

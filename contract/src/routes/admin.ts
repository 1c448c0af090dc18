import { initContract } from '@ts-rest/core';
import {
  BillingHealth,
  CancelAtPeriodEndRequest,
  MemoryHygieneQuery,
  MemoryHygieneReport,
  MemoryRetentionQuery,
  MemoryRetentionReport,
  ScheduledJobsReport,
  UsageReconcileReport,
  WebhookReprocessQuery,
  WebhookReprocessReport,
} from '../schemas/admin.js';
import { BillingStatusResponse } from '../schemas/billing.js';
import { SessionCleanupReport } from '../schemas/dashboard.js';
import { ADMIN } from './auth.js';

const c = initContract();

/**
 * Operator routes: outside the published contract, behind the admin token. Full paths: the spec
 * puts most under `/admin` and the billing health view under `/v1/admin`.
 */
export const adminContract = c.router({
  runMemoryHygiene: {
    method: 'POST',
    path: '/admin/memory-hygiene',
    query: MemoryHygieneQuery,
    body: c.noBody(),
    responses: { 200: MemoryHygieneReport },
    metadata: ADMIN,
    summary: 'Archive expired memories and supersede near duplicates (operator route)',
  },
  runMemoryRetention: {
    method: 'POST',
    path: '/admin/memory-retention',
    query: MemoryRetentionQuery,
    body: c.noBody(),
    responses: { 200: MemoryRetentionReport },
    metadata: ADMIN,
    summary: "Archive live memories older than their workspace plan's retention (operator route)",
  },
  reconcileUsage: {
    method: 'POST',
    path: '/admin/usage/reconcile',
    body: c.noBody(),
    responses: { 200: UsageReconcileReport },
    metadata: ADMIN,
    summary: 'Refund metering reservations left open past their expiry (operator route)',
  },
  reprocessWebhooks: {
    method: 'POST',
    path: '/admin/webhooks/reprocess',
    query: WebhookReprocessQuery,
    body: c.noBody(),
    responses: { 200: WebhookReprocessReport },
    metadata: ADMIN,
    summary: 'Rerun verification of deferred payment callbacks now (operator route)',
  },
  getBillingHealth: {
    method: 'GET',
    path: '/v1/admin/billing/health',
    responses: { 200: BillingHealth },
    metadata: ADMIN,
    summary: 'Deferred callbacks, last verification, provider reachability (operator route)',
  },
  setCancelAtPeriodEnd: {
    method: 'POST',
    path: '/admin/billing/cancel-at-period-end',
    body: CancelAtPeriodEndRequest,
    responses: { 200: BillingStatusResponse },
    metadata: ADMIN,
    summary: "End a workspace's paid plan at its period end, without grace (operator route)",
  },
  listScheduledJobs: {
    method: 'GET',
    path: '/v1/admin/jobs',
    responses: { 200: ScheduledJobsReport },
    metadata: ADMIN,
    summary: 'Scheduled jobs: schedule, last run on any instance, next run (operator route)',
  },
  cleanupDashboardSessions: {
    method: 'POST',
    path: '/admin/sessions/cleanup',
    body: c.noBody(),
    responses: { 200: SessionCleanupReport },
    metadata: ADMIN,
    summary: 'Delete expired dashboard sessions (operator route)',
  },
});

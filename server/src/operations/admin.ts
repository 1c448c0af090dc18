import {
  contract,
  type BillingHealth,
  type BillingStatusResponse,
  type CancelAtPeriodEndRequest,
  type MemoryHygieneQuery,
  type MemoryHygieneReport,
  type MemoryRetentionQuery,
  type MemoryRetentionReport,
  type ScheduledJobsReport,
  type UsageReconcileReport,
  type WebhookReprocessQuery,
  type WebhookReprocessReport,
} from '@mnemo/contract';
import { reconcileUsage as reconcile } from '../services/usage/index.js';
import type { OperationContext, OperatorCaller } from './context.js';
import { defineOperation } from './operation.js';

// Operator routes (admin token): outside the published contract, for one installation's operator.

const scopeOf = (query: { workspace_id?: string | undefined }) =>
  query.workspace_id ? { workspaceId: query.workspace_id } : {};

/** Archives expired memories and supersedes near duplicates now. */
export const runMemoryHygiene = defineOperation<
  MemoryHygieneQuery,
  MemoryHygieneReport,
  Pick<OperationContext, 'maintenance'>,
  OperatorCaller
>('runMemoryHygiene', contract.admin.runMemoryHygiene, async (ctx, { input }) => ({
  output: await ctx.maintenance.hygiene({
    dryRun: input.dry_run,
    limit: input.limit,
    ...scopeOf(input),
  }),
}));

/** Archives memories past their plan's retention now. */
export const runMemoryRetention = defineOperation<
  MemoryRetentionQuery,
  MemoryRetentionReport,
  Pick<OperationContext, 'maintenance'>,
  OperatorCaller
>('runMemoryRetention', contract.admin.runMemoryRetention, async (ctx, { input }) => ({
  output: await ctx.maintenance.retention({
    dryRun: input.dry_run,
    limit: input.limit,
    ...scopeOf(input),
  }),
}));

/** Settles lapsed usage reservations and drops expired counter windows. */
export const reconcileUsage = defineOperation<
  undefined,
  UsageReconcileReport,
  Pick<OperationContext, 'writer'>,
  OperatorCaller
>('reconcileUsage', contract.admin.reconcileUsage, async (ctx) => ({
  output: await reconcile(ctx.writer),
}));

/** Runs the payment callbacks awaiting processing again, due or not. */
export const reprocessWebhooks = defineOperation<
  WebhookReprocessQuery,
  WebhookReprocessReport,
  Pick<OperationContext, 'billing'>,
  OperatorCaller
>('reprocessWebhooks', contract.admin.reprocessWebhooks, async (ctx, { input }) => ({
  output: await ctx.billing.reprocess({ limit: input.limit, force: true }),
}));

/** Every scheduled job's schedule and last run, from any instance. */
export const listScheduledJobs = defineOperation<
  undefined,
  ScheduledJobsReport,
  Pick<OperationContext, 'maintenance'>,
  OperatorCaller
>('listScheduledJobs', contract.admin.listScheduledJobs, async (ctx) => ({
  output: await ctx.maintenance.scheduledJobs(),
}));

export const getBillingHealth = defineOperation<
  undefined,
  BillingHealth,
  Pick<OperationContext, 'billing'>,
  OperatorCaller
>('getBillingHealth', contract.admin.getBillingHealth, async (ctx) => ({
  output: await ctx.billing.health(),
}));

export const setCancelAtPeriodEnd = defineOperation<
  CancelAtPeriodEndRequest,
  BillingStatusResponse,
  Pick<OperationContext, 'billing'>,
  OperatorCaller
>('setCancelAtPeriodEnd', contract.admin.setCancelAtPeriodEnd, async (ctx, { input }) => ({
  output: await ctx.billing.setCancelAtPeriodEnd(input.workspace_id, input.cancel_at_period_end),
}));

export const cleanupDashboardSessions = defineOperation<
  undefined,
  { deleted: number },
  Pick<OperationContext, 'maintenance'>,
  OperatorCaller
>('cleanupDashboardSessions', contract.admin.cleanupDashboardSessions, async (ctx) => ({
  output: { deleted: await ctx.maintenance.cleanupSessions() },
}));

import {
  contract,
  type MemoryBreakdownResponse,
  type UsageHistoryQuery,
  type UsageHistoryResponse,
  type UsageResponse,
} from '@mnemo/contract';
import { memoryBreakdown, usageHistory, usageToday } from '../services/usage/index.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** The window the console charts when none is asked for. */
export const DEFAULT_HISTORY_DAYS = 30;

/** GET /v1/usage/today: today's consumption against the workspace's plan. */
export const getUsageToday = defineOperation<
  undefined,
  UsageResponse,
  Pick<OperationContext, 'writer' | 'plans' | 'quota' | 'settings'>
>('getUsageToday', contract.usage.getUsageToday, async (ctx, { caller }) => ({
  output: await usageToday(
    {
      // The counters a write just moved: read from the primary.
      db: ctx.writer,
      plans: ctx.plans,
      limitsEnabled: ctx.settings.limitsEnabled,
      unsettled: (workspaceId) => ctx.quota.unsettled?.(workspaceId) ?? [],
    },
    caller.workspaceId,
  ),
}));

/** GET /v1/usage/history: the console's usage charts (REST only). */
export const getUsageHistory = defineOperation<
  UsageHistoryQuery,
  UsageHistoryResponse,
  Pick<OperationContext, 'reader' | 'clock' | 'quota'>
>('getUsageHistory', contract.usage.getUsageHistory, async (ctx, { caller, input }) => ({
  output: await usageHistory(
    ctx.reader,
    caller.workspaceId,
    input.days ?? DEFAULT_HISTORY_DAYS,
    new Date(ctx.clock.now()),
    ctx.quota.unsettled?.(caller.workspaceId) ?? [],
  ),
}));

/** GET /v1/usage/memories: memories by lifecycle state and owner (REST only). */
export const getMemoryBreakdown = defineOperation<
  Record<string, never>,
  MemoryBreakdownResponse,
  Pick<OperationContext, 'reader'>
>('getMemoryBreakdown', contract.usage.getMemoryBreakdown, async (ctx, { caller }) => ({
  output: await memoryBreakdown(ctx.reader, caller.workspaceId),
}));

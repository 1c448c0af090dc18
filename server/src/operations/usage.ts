import { contract, type UsageResponse } from '@mnemo/contract';
import { usageToday } from '../services/usage/index.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

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

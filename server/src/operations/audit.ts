import {
  contract,
  type AuditLogPage,
  type AuditLogQuery,
  type PruningMetrics,
} from '@mnemo/contract';
import { listAuditLog } from '../services/audit/log.js';
import { pruningMetrics } from '../services/pruning.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** GET the caller's audit log (tenant operator route). */
export const getAuditLog = defineOperation<
  AuditLogQuery,
  AuditLogPage,
  Pick<OperationContext, 'writer'>
>('getAuditLog', contract.audit.getAuditLog, async (ctx, { caller, input }) => ({
  // Audit records are written by the primary in batches: read them there.
  output: await listAuditLog(ctx.writer, caller.workspaceId, input),
}));

/** GET the caller's pruning metrics (tenant operator route). */
export const getPruningMetrics = defineOperation<
  undefined,
  PruningMetrics,
  Pick<OperationContext, 'writer'>
>('getPruningMetrics', contract.audit.getPruningMetrics, async (ctx, { caller }) => ({
  output: await pruningMetrics(ctx.writer, caller.workspaceId),
}));

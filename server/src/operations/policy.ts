import { ServiceError } from '../errors.js';
import { unavailableError } from '../db/faults.js';
import type { NewAuditRecord } from '../db/schema/index.js';
import type { AiCostLimiter } from '../limits/ai-cost.js';
import type { AuditDraft, Caller } from './context.js';
import { COST_ESTIMATORS, type CostPricing } from './cost.js';
import type { Operation } from './operation.js';

/** The cross-cutting machinery the wrapper applies, built once by the composition root. */
export interface PolicyMachinery {
  /** The AI-cost burst and global budget; undefined when limits are off or AI work is free. */
  aiCost: AiCostLimiter | undefined;
  pricing: CostPricing;
  /** Where audit records not written by an operation's own transaction go (batched). */
  audit: { record(entry: NewAuditRecord): void };
}

/** An operation with its policies applied: what a door calls. */
export type GuardedOperation<I, O> = (caller: Caller, input: I) => Promise<O>;

/** The status the REST door answers an operation's failure with (the error handler's mapping). */
function statusOf(error: unknown): number {
  if (error instanceof ServiceError) return error.status;
  return unavailableError(error)?.status ?? 500;
}

/**
 * The one policy wrapper both doors call an operation through. From the operation's contract
 * metadata it checks the caller's auth mode (internal subrequests only where allowed), charges
 * the AI-cost estimate against the burst and the global budget, runs the operation (which meters
 * its plan quota itself, reserving before the costly work), and writes one audit record: the
 * write's own transaction stores it, or the wrapper records it with the outcome. Nothing here
 * touches the database on the way in: a search costs no extra round trip.
 */
export function guard<I, O, C>(
  operation: Operation<I, O, C>,
  ctx: C,
  machinery: PolicyMachinery,
): GuardedOperation<I, O> {
  const { policies, route } = operation;
  const estimate = policies.cost ? COST_ESTIMATORS[policies.cost] : undefined;
  return async function guardedOperation(caller, input) {
    const audit: AuditDraft = {
      requestId: caller.requestId,
      workspaceId: caller.workspaceId,
      apiKeyId: caller.apiKeyId,
      // The contract's method and pattern name the operation, whichever door it came through;
      // the path says where the request arrived.
      method: route.method,
      path: caller.origin.path,
      route: route.path,
      ip: caller.origin.ip,
      userAgent: caller.origin.userAgent,
      startedAt: caller.origin.startedAt,
    };
    let status = 200;
    let audited = false;
    try {
      if (caller.via === 'internal' && policies.internalSubrequest !== true) {
        throw new ServiceError('UNAUTHORIZED', 'Internal subrequests are not accepted here');
      }
      if (estimate && machinery.aiCost) {
        const cost = estimate(input, machinery.pricing);
        await machinery.aiCost.charge(caller.workspaceId, cost, caller.requestId);
      }
      const result = await operation.run(ctx, { caller, input, audit });
      audited = result.audited === true;
      return result.output;
    } catch (error) {
      status = statusOf(error);
      throw error;
    } finally {
      if (!audited) {
        const { startedAt, ...fields } = audit;
        const durationMs = Math.round(Number(process.hrtime.bigint() - startedAt) / 1e6);
        machinery.audit.record({ ...fields, status, durationMs });
      }
      caller.audited();
    }
  };
}

import type { RouteAuth, RouteMetadata } from '@mnemo/contract';
import { ServiceError } from '../errors.js';
import { unavailableError } from '../db/faults.js';
import type { NewAuditRecord } from '../db/schema/index.js';
import type { AiCostLimiter } from '../limits/ai-cost.js';
import type { AnyCaller, AuditDraft, Caller, ReadRouting } from './context.js';
import { COST_ESTIMATORS, type CostPricing } from './cost.js';
import type { Operation } from './operation.js';

/** The cross-cutting machinery the wrapper applies, built once by the composition root. */
export interface PolicyMachinery {
  /** The AI-cost burst and global budget; undefined when limits are off or AI work is free. */
  aiCost: AiCostLimiter | undefined;
  pricing: CostPricing;
  /** Where audit records not written by an operation's own transaction go (batched). */
  audit: { record(entry: NewAuditRecord): void };
  /** Read replicas (`DATABASE_READ_URL`); undefined: every read on the primary. */
  reads?: ReadRouting | undefined;
}

/**
 * How an operation meets read replicas: a `read` runs on the reader the routing picks (a replica
 * when one is fresh enough); a `write` answers with a consistency token; anything else (feedback,
 * saved history) reads and writes on the primary and issues no token.
 */
export type ReplicaUse = 'read' | 'write' | 'primary';

/** An operation with its policies applied: what a door calls. */
export type GuardedOperation<I, O, K extends AnyCaller = Caller> = (
  caller: K,
  input: I,
) => Promise<O>;

/** The caller kinds each auth mode admits. */
const ADMITTED: Record<RouteAuth, readonly AnyCaller['via'][]> = {
  public: ['public'],
  payment_callback: ['payment_callback'],
  api_key_or_session: ['api_key', 'session', 'internal'],
  admin_api_key: ['api_key'],
  admin_token: ['admin_token'],
  dashboard_token: ['dashboard_token'],
  dashboard_session: ['dashboard_session'],
};

/** Refuses a caller the operation's auth mode does not admit. */
function checkAuth(policies: RouteMetadata, caller: AnyCaller): void {
  if (caller.via === 'internal' && policies.internalSubrequest !== true) {
    throw new ServiceError('UNAUTHORIZED', 'Internal subrequests are not accepted here');
  }
  if (!ADMITTED[policies.auth].includes(caller.via)) {
    throw new ServiceError('UNAUTHORIZED', 'This operation does not take these credentials');
  }
  if (
    policies.auth === 'admin_api_key' &&
    !(caller.via === 'api_key' && caller.keyScope === 'admin')
  ) {
    throw new ServiceError('FORBIDDEN', 'This route needs an API key of scope admin');
  }
}

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
export function guard<I, O, C, K extends AnyCaller>(
  operation: Operation<I, O, C, K>,
  ctx: C,
  machinery: PolicyMachinery,
  replicaUse: ReplicaUse = 'primary',
): GuardedOperation<I, O, K> {
  const { reads } = machinery;
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
      // An operator operation runs for the admin token only, a console one for its sessions or
      // sign-in tokens, a tenant one for keys, tenant sessions and (where allowed) subrequests,
      // the payment callback for the provider only.
      checkAuth(policies, caller);
      // Costs are charged to a workspace: operator operations carry no cost kind.
      if (estimate && machinery.aiCost && caller.workspaceId !== null) {
        const cost = estimate(input, machinery.pricing);
        await machinery.aiCost.charge(caller.workspaceId, cost, caller.requestId);
      }
      const consistency = caller.consistency;
      if (reads && replicaUse === 'read') {
        const reader = await reads.readerFor(
          consistency?.readAfter,
          consistency?.primaryWithoutToken ?? false,
        );
        const result = await operation
          .run({ ...ctx, reader }, { caller, input, audit })
          .catch((error: unknown) => {
            reads.noteFailure(reader, error);
            throw error;
          });
        audited = result.audited === true;
        return result.output;
      }
      const result = await operation.run(ctx, { caller, input, audit });
      audited = result.audited === true;
      // Committed: the primary's WAL is past the write, so its position is the write's token.
      if (reads && replicaUse === 'write' && consistency)
        consistency.issued(await reads.writePosition());
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

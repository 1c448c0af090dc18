import { routeMetadata, type RouteMetadata } from '@mnemo/contract';
import type { AppRoute } from '@ts-rest/core';
import type { AnyCaller, AuditDraft, Caller, OperationContext } from './context.js';

/** One call of an operation: who calls, what with, and the audit record a write stores. */
export interface OperationCall<I, K extends AnyCaller = Caller> {
  caller: K;
  input: I;
  audit: AuditDraft;
}

export interface OperationResult<O> {
  output: O;
  /** The operation's transaction stored `audit` (a write that stored something). */
  audited?: boolean;
}

/**
 * One use case, reachable from REST, MCP or both. Its contract route carries its policies as
 * data (`metadata`: auth, internal subrequests, AI cost, quota resources, audit, events); the
 * policy wrapper applies them, so the operation itself is only the work.
 */
export interface Operation<I, O, C = OperationContext, K extends AnyCaller = Caller> {
  name: string;
  route: AppRoute;
  policies: RouteMetadata;
  run(ctx: C, call: OperationCall<I, K>): Promise<OperationResult<O>>;
}

/** An operation over the part `C` of the context it uses. */
export function defineOperation<
  I,
  O,
  C extends Partial<OperationContext>,
  K extends AnyCaller = Caller,
>(
  name: string,
  route: AppRoute,
  run: (ctx: C, call: OperationCall<I, K>) => Promise<OperationResult<O>>,
): Operation<I, O, C, K> {
  return { name, route, policies: routeMetadata(route), run };
}

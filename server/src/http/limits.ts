import type { Request, RequestHandler, Response } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '../errors.js';
import { warnStoreFailure, type Counter, type LimitBackend } from '../limits/backend.js';
import type { Logger } from '../logger.js';
import type { RequestAuth } from './auth.js';
import { waitingOn } from './deadline.js';
import { sendError } from './errors.js';

const MINUTE_SECONDS = 60;

/**
 * One window limit: its counter and its `RateLimit-Policy` item (`"name";q=…;w=…`), made once per
 * quota rather than per request; limits run on every request, mostly before the JIT has warmed.
 */
interface WindowLimit {
  name: string;
  quota: number;
  windowSeconds: number;
  counter: Counter;
  policy: string;
}

/** Where a request stands against one window limit, as the IETF RateLimit headers describe it. */
interface PolicyState {
  limit: WindowLimit;
  remaining: number;
  resetSeconds: number;
  rejected: boolean;
}

/** The per-minute limits of one name, one per quota (quotas come from plans and settings). */
function minuteLimits(backend: LimitBackend, name: string, counterName = name) {
  const limits = new Map<number, WindowLimit>();
  return (quota: number): WindowLimit => {
    let limit = limits.get(quota);
    if (!limit) {
      limit = {
        name,
        quota,
        windowSeconds: MINUTE_SECONDS,
        counter: backend.counter({
          name: counterName,
          points: quota,
          durationSeconds: MINUTE_SECONDS,
        }),
        policy: `"${name}";q=${quota};w=${MINUTE_SECONDS}`,
      };
      limits.set(quota, limit);
    }
    return limit;
  };
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * `RateLimit-Policy` lists every window limit the request was counted against; `RateLimit` gives
 * the one nearest to its end (draft-ietf-httpapi-ratelimit-headers: `"name";q=…;w=…` and
 * `"name";r=…;t=…`).
 */
function setRateLimitHeaders(res: Response, first: PolicyState, second?: PolicyState): void {
  const tightest = second && second.remaining < first.remaining ? second : first;
  res.setHeader(
    'RateLimit-Policy',
    second ? `${first.limit.policy}, ${second.limit.policy}` : first.limit.policy,
  );
  res.setHeader(
    'RateLimit',
    `"${tightest.limit.name}";r=${tightest.remaining};t=${tightest.resetSeconds}`,
  );
}

function limited(req: Request, res: Response, message: string, retryAfterSeconds: number): void {
  if (res.headersSent) return;
  sendError(
    req,
    res,
    new ServiceError('RATE_LIMITED', `${message}; retry in ${retryAfterSeconds} s`, undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),
  );
}

/**
 * Counts `points` against a window limit. Resolves with the policy state, `rejected` set when the
 * request is over the limit; a store error rejects the promise (the caller decides).
 */
async function count(limit: WindowLimit, key: string, points = 1): Promise<PolicyState> {
  try {
    const res = await limit.counter.consume(key, points);
    return {
      limit,
      remaining: res.remainingPoints,
      resetSeconds: seconds(res.msBeforeNext),
      rejected: false,
    };
  } catch (outcome) {
    if (!(outcome instanceof RateLimiterRes)) throw outcome;
    return { limit, remaining: 0, resetSeconds: seconds(outcome.msBeforeNext), rejected: true };
  }
}

export interface TenantLimitsOptions {
  backend: LimitBackend;
  /** Requests per minute allowed to this request's API key. */
  keyRpm(auth: RequestAuth): number;
  /** Requests per minute allowed to the workspace (its plan's RPM). */
  workspaceRpm(workspaceId: string): number | Promise<number>;
  /** In-flight requests per workspace, each lease expiring after `ttlMs` (a crashed request's). */
  inFlight: { limit: number; ttlMs: number };
  logger?: Logger;
}

/**
 * The spec's request limits on tenant routes, after auth: per key per minute, per workspace per
 * minute, then an in-flight lease per workspace held until the response closes. Over a limit:
 * 429 `RATE_LIMITED` with `Retry-After`. A store outage lets requests through (logged): the
 * limiter must not take the service down with it. Unauthenticated requests pass untouched.
 */
export function tenantLimits({
  backend,
  keyRpm,
  workspaceRpm,
  inFlight,
  logger,
}: TenantLimitsOptions): RequestHandler {
  const keyLimit = minuteLimits(backend, 'key', 'key-rpm');
  const workspaceLimit = minuteLimits(backend, 'workspace', 'workspace-rpm');
  return async function tenantLimitsMiddleware(req, res, next) {
    const auth = req.auth;
    if (!auth) return next();
    try {
      const workspaceQuota = workspaceRpm(auth.workspaceId);
      const workspaceWindow = workspaceLimit(
        typeof workspaceQuota === 'number' ? workspaceQuota : await workspaceQuota,
      );
      const keyWindow = auth.apiKeyId ? keyLimit(keyRpm(auth)) : undefined;
      // Both window counters at once: on Redis, one round trip instead of two.
      const [workspace, key] = await waitingOn(
        res,
        'limit_store',
        Promise.all([
          count(workspaceWindow, auth.workspaceId),
          keyWindow && auth.apiKeyId ? count(keyWindow, auth.apiKeyId) : undefined,
        ]),
      );
      // The deadline answered while the store was slow: nothing more goes on this response.
      if (res.headersSent) return;
      if (key) setRateLimitHeaders(res, key, workspace);
      else setRateLimitHeaders(res, workspace);
      if (key?.rejected) {
        // Refused for its key: the workspace's window does not count it (a request the
        // workspace's window refused keeps its point spent: fixed window).
        if (!workspace.rejected) await workspaceWindow.counter.reward(auth.workspaceId, 1);
        return limited(
          req,
          res,
          `Rate limit exceeded: ${key.limit.quota} requests per minute per API key`,
          key.resetSeconds,
        );
      }
      if (workspace.rejected) {
        return limited(
          req,
          res,
          `Rate limit exceeded: ${workspace.limit.quota} requests per minute per workspace`,
          workspace.resetSeconds,
        );
      }
      const lease = await waitingOn(
        res,
        'limit_store',
        backend.leases.acquire(`inflight:${auth.workspaceId}`, inFlight.limit, inFlight.ttlMs),
      );
      if (res.headersSent) {
        await lease.release();
        return;
      }
      if (!lease.granted) {
        return limited(
          req,
          res,
          `Too many requests in flight: ${inFlight.limit} at a time per workspace`,
          seconds(lease.retryAfterMs),
        );
      }
      res.once('close', () => {
        lease.release().catch((err: unknown) => {
          warnStoreFailure(logger, err, 'in-flight lease release failed');
        });
      });
    } catch (err) {
      warnStoreFailure(logger, err, 'limit store failed; requests allowed');
    }
    if (res.headersSent) return;
    next();
  };
}

export interface IpLimitOptions {
  backend: LimitBackend;
  /** Requests per minute per client. */
  limit: number;
  /** Namespaces the counter's keys. */
  name: string;
  key: (req: Request) => string;
  describe: string;
  logger?: Logger;
}

/** A per-client window limit (the MCP paths' IP limit) on the same counters as tenant limits. */
export function clientRateLimit({
  backend,
  limit,
  name,
  key,
  describe,
  logger,
}: IpLimitOptions): RequestHandler {
  const window = minuteLimits(backend, name)(limit);
  return async function clientRateLimitMiddleware(req, res, next) {
    let state;
    try {
      state = await waitingOn(res, 'limit_store', count(window, key(req)));
    } catch (err) {
      warnStoreFailure(logger, err, 'rate limit store failed; requests allowed');
      return res.headersSent ? undefined : next();
    }
    // The deadline answered while the store was slow: nothing more goes on this response.
    if (res.headersSent) return;
    setRateLimitHeaders(res, state);
    if (!state.rejected) return next();
    limited(req, res, `Rate limit exceeded: ${describe}`, state.resetSeconds);
  };
}

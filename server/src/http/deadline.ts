import type { RequestHandler, Response } from 'express';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../db/faults.js';
import { ServiceError } from '../errors.js';
import { DeadlineFence, runFenced } from '../services/deadline-fence.js';
import { sendError } from './errors.js';

const PASSED = Symbol('deadline passed');
const FENCE = Symbol('deadline fence');
const WAITING = Symbol('waiting on');

type Locals = Record<symbol, unknown>;

/** Whether {@link requestDeadline} answered this response (the handler may still be running). */
export function deadlinePassed(res: Response): boolean {
  return (res.locals as Locals)[PASSED] === true;
}

/** Outside services a request waits on that the deadline can name when it answers for them. */
export type Dependency = 'limit_store';

const WAITING_ON: Record<Dependency, string> = {
  limit_store: 'The rate-limit store (Redis) did not answer in time',
};

/**
 * Marks the request as waiting on `dependency` until `work` settles, so that a deadline passing
 * meanwhile names it rather than guessing.
 */
export async function waitingOn<T>(
  res: Response,
  dependency: Dependency,
  work: Promise<T>,
): Promise<T> {
  const locals = res.locals as Locals;
  locals[WAITING] = dependency;
  try {
    return await work;
  } finally {
    if (locals[WAITING] === dependency) delete locals[WAITING];
  }
}

/**
 * The deadline's 503 when nothing was written: it names the outside service the request was
 * waiting on when it knows one; otherwise it says only that the request ran out of time (the
 * database, a provider, or load may be why).
 */
function notWritten(res: Response): ServiceError {
  const waiting = (res.locals as Locals)[WAITING] as Dependency | undefined;
  const cause = waiting ? WAITING_ON[waiting] : 'The request did not finish in time';
  return new ServiceError(
    'SERVICE_UNAVAILABLE',
    `${cause}; nothing was written; retry shortly`,
    undefined,
    { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
  );
}

/** How long the deadline waits for a handler that wrote before it passed to answer by itself. */
const UNKNOWN_OUTCOME_GRACE_MS = 5_000;

/** The deadline's answer when a write it answers for may or may not have committed. */
function outcomeUnknown(): ServiceError {
  return new ServiceError(
    'SERVICE_UNAVAILABLE',
    'The request did not finish in time and part of it may have been written; repeat it with the same idempotency_key to learn what was',
    { outcome: ['unknown'] },
    { 'Retry-After': '2' },
  );
}

/**
 * A request that has not answered `ms` after it arrived answers 503 `SERVICE_UNAVAILABLE` with
 * `Retry-After`, even when the database never replies (a hung connection, a queue for the pool):
 * the statement and lock timeouts bound what the database does, this bounds what the client
 * waits. That 503 means "not written": from the deadline on no write of the request commits
 * (the fence, `services/deadline-fence.ts`), and if one already committed or is committing, the
 * handler's own answer (say, a partial ingest) is awaited instead; only if that does not come
 * within a grace period is the answer 503 with `details.outcome: ["unknown"]`. The handler keeps
 * running; what it sends after the deadline answered is dropped (see the error handler).
 * `skip` exempts long-lived responses (MCP event streams).
 */
export function requestDeadline({
  ms,
  skip,
  graceMs = UNKNOWN_OUTCOME_GRACE_MS,
}: {
  ms: number;
  skip?: (path: string) => boolean;
  graceMs?: number;
}): RequestHandler {
  return function requestDeadlineMiddleware(req, res, next) {
    if (ms <= 0 || skip?.(req.path)) return next();
    const fence = new DeadlineFence();
    (res.locals as Locals)[FENCE] = fence;
    const answered = () => res.headersSent || res.writableEnded;
    const answer = (error: ServiceError) => {
      if (answered()) return;
      (res.locals as Locals)[PASSED] = true;
      sendError(req, res, error);
    };
    const timer = setTimeout(() => {
      if (answered()) return;
      // Bounded from the deadline on, even if a commit that is running never returns.
      const unknown = setTimeout(() => answer(outcomeUnknown()), graceMs);
      unknown.unref();
      res.once('close', () => clearTimeout(unknown));
      void fence.expire().then(() => {
        if (fence.commits > 0) return; // something was written: the handler's answer says what
        clearTimeout(unknown);
        answer(notWritten(res));
      });
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    runFenced(fence, next);
  };
}

/**
 * Last before a handler: a request the deadline answered while it waited (for auth, a limit
 * store) stops here instead of running its handler late; one still in time runs under its fence
 * (the fence's context does not survive the body parser's stream events, so it is entered again).
 */
export function deadlineFence(): RequestHandler {
  return function deadlineFenceMiddleware(_req, res, next) {
    if (res.headersSent || res.writableEnded) return;
    const fence = (res.locals as Locals)[FENCE];
    if (!(fence instanceof DeadlineFence)) return next();
    if (fence.expired) return;
    runFenced(fence, next);
  };
}

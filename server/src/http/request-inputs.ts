import {
  CONSISTENCY_TOKEN_HEADER,
  CONSISTENCY_TOKEN_PATTERN,
  PII_SCAN_HEADER,
  SAVE_HISTORY_HEADER,
} from '@mnemo/contract';
import { ServiceError } from '../errors.js';
import type { Request } from 'express';
import type {
  AnonymousCaller,
  Caller,
  DashboardSessionCaller,
  DashboardTokenCaller,
  OperatorCaller,
} from '../operations/context.js';
import { requireAuth, requireSession, type RequestAuth } from './auth.js';

/** The parts of an HTTP request a caller is made of (ts-rest narrows its request's query type). */
interface CarryingRequest {
  auth?: RequestAuth;
  requestId: string;
  startedAt: bigint;
  path: string;
  ip?: string | undefined;
  auditRecorded?: boolean;
  get(name: string): string | undefined;
  /** Express's response of the request: a write's consistency token goes in its headers. */
  res?: { headersSent: boolean; setHeader(name: string, value: string): unknown } | undefined;
}

const MAX_PATH = 512;
const MAX_USER_AGENT = 256;

/** Where a call came in, for its audit record. */
function originOf(req: CarryingRequest): Caller['origin'] {
  return {
    path: req.path.slice(0, MAX_PATH),
    ip: req.ip ?? null,
    userAgent: req.get('user-agent')?.slice(0, MAX_USER_AGENT) ?? null,
    startedAt: req.startedAt,
  };
}

/** Marks the request audited: the operation wrote its record, so the door writes none. */
function auditedBy(req: CarryingRequest): () => void {
  return () => {
    req.auditRecorded = true;
  };
}

/**
 * The caller of an operation, from the HTTP request that carries the call. REST handlers and MCP
 * tools both build it here, so that both doors honour the same headers the same way and audit the
 * same fields.
 */
export function callerOf(req: CarryingRequest, door: Caller['door']): Caller {
  const auth = requireAuth(req);
  const saveHistory = req.get(SAVE_HISTORY_HEADER);
  return {
    door,
    workspaceId: auth.workspaceId,
    apiKeyId: auth.apiKeyId,
    via: auth.internal ? 'internal' : auth.session ? 'session' : 'api_key',
    ...(auth.scope ? { keyScope: auth.scope } : {}),
    requestId: req.requestId,
    saveHistory: saveHistory === '1' || saveHistory?.toLowerCase() === 'true',
    piiScan: req.get(PII_SCAN_HEADER) === '1',
    origin: originOf(req),
    consistency: {
      readAfter: consistencyTokenOf(req),
      primaryWithoutToken: door === 'mcp',
      issued: (token) => {
        // An MCP answer streams: its headers are out before the tool runs.
        if (req.res && !req.res.headersSent) req.res.setHeader(CONSISTENCY_TOKEN_HEADER, token);
      },
    },
    audited: auditedBy(req),
  };
}

/** The request's consistency token; one that is not a WAL position is refused. */
function consistencyTokenOf(req: CarryingRequest): string | undefined {
  const token = req.get(CONSISTENCY_TOKEN_HEADER)?.trim();
  if (!token) return undefined;
  if (!CONSISTENCY_TOKEN_PATTERN.test(token)) {
    throw new ServiceError(
      'BAD_REQUEST',
      `${CONSISTENCY_TOKEN_HEADER}: send back the header of a write unchanged (like 0/16B3748)`,
    );
  }
  return token;
}

/** The caller of an operator operation, from a request the admin guard let through. */
export function operatorCallerOf(req: CarryingRequest): OperatorCaller {
  return {
    door: 'rest',
    workspaceId: null,
    apiKeyId: null,
    via: 'admin_token',
    requestId: req.requestId,
    origin: originOf(req),
    audited: auditedBy(req),
  };
}

/** The caller of a console operation, from a request the session check let through. */
export function dashboardSessionCallerOf(req: CarryingRequest): DashboardSessionCaller {
  const session = requireSession(req);
  return {
    door: 'rest',
    workspaceId: session.workspaceId,
    apiKeyId: null,
    via: 'dashboard_session',
    session,
    requestId: req.requestId,
    origin: originOf(req),
    audited: auditedBy(req),
  };
}

/** The caller of console sign-in: the identity token is in the body, for the operation to verify. */
export function dashboardTokenCallerOf(req: CarryingRequest): DashboardTokenCaller {
  return {
    door: 'rest',
    workspaceId: null,
    apiKeyId: null,
    via: 'dashboard_token',
    requestId: req.requestId,
    origin: originOf(req),
    audited: auditedBy(req),
  };
}

/** The caller of a public probe or of the payment callback: no workspace and no key. */
export function anonymousCallerOf(
  req: CarryingRequest,
  via: AnonymousCaller['via'],
): AnonymousCaller {
  return {
    door: 'rest',
    workspaceId: null,
    apiKeyId: null,
    via,
    requestId: req.requestId,
    origin: originOf(req),
    audited: auditedBy(req),
  };
}

/** The audit fields of a request no operation recorded (refused before one ran, or none). */
export function requestAuditFields(req: Request) {
  return {
    requestId: req.requestId,
    workspaceId: req.auth?.workspaceId ?? null,
    apiKeyId: req.auth?.apiKeyId ?? null,
    method: req.method,
    path: req.path.slice(0, MAX_PATH),
    // The contract's pattern, so the audit log can be filtered by route without knowing ids.
    route: req.tsRestRoute?.path ?? null,
    ip: req.ip ?? null,
    userAgent: req.get('user-agent')?.slice(0, MAX_USER_AGENT) ?? null,
  };
}

import type { Request, RequestHandler } from 'express';
import type { NewAuditRecord } from '../db/schema/index.js';
import type { Logger } from '../logger.js';
import type { AuditRecorder } from '../services/audit.js';

const MAX_PATH = 512;
const MAX_USER_AGENT = 256;

/** The audit fields a request determines by itself (everything but its outcome). */
export function auditFields(req: Request): Omit<NewAuditRecord, 'status' | 'durationMs'> {
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

/** Fields a handler adds to its request's completion line; never parameters or user content. */
const extraFields = new WeakMap<Request, { mcp_tools?: string[] }>();

/** Names an MCP tool called in this request (a batch may call several) for its completion line. */
export function noteMcpTool(req: Request, tool: string): void {
  const fields = extraFields.get(req) ?? {};
  fields.mcp_tools = [...(fields.mcp_tools ?? []), tool];
  extraFields.set(req, fields);
}

/**
 * Registered first so that every request, whatever answers it, ends with one audit record and
 * one structured completion log line. A handler that wrote its own audit record inside its
 * transaction (a memory write) sets `req.auditRecorded`.
 */
export function completion({
  logger,
  audit,
}: {
  logger: Logger;
  audit: AuditRecorder;
}): RequestHandler {
  return function completionMiddleware(req, res, next) {
    let done = false;
    const finish = (aborted: boolean) => {
      if (done) return;
      done = true;
      const durationMs = Number(process.hrtime.bigint() - req.startedAt) / 1e6;
      const status = aborted && !res.headersSent ? 499 : res.statusCode;
      const fields = auditFields(req);
      if (!req.auditRecorded)
        audit.record({ ...fields, status, durationMs: Math.round(durationMs) });
      logger.info(
        {
          request_id: req.requestId,
          method: req.method,
          path: fields.path,
          status,
          duration_ms: Math.round(durationMs * 10) / 10,
          workspace_id: req.auth?.workspaceId,
          ...extraFields.get(req),
          ...(aborted ? { aborted: true } : {}),
        },
        'request completed',
      );
    };
    res.on('finish', () => finish(false));
    res.on('close', () => finish(!res.writableFinished));
    next();
  };
}

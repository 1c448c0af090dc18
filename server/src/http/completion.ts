import type { Request, RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import type { AuditRecorder } from '../services/audit/index.js';
import { requestAuditFields } from './request-inputs.js';

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
 * one structured completion log line. A request that ran an operation has its audit record from
 * the operation's policy wrapper (`req.auditRecorded`): completion writes none for it.
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
      const fields = requestAuditFields(req);
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

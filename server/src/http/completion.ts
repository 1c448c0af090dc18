import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import type { AuditRecorder } from '../services/audit.js';

const MAX_PATH = 512;
const MAX_USER_AGENT = 256;

/**
 * Registered first so that every request, whatever answers it, ends with one audit record and
 * one structured completion log line.
 */
export function completion({ logger, audit }: { logger: Logger; audit: AuditRecorder }): RequestHandler {
  return function completionMiddleware(req, res, next) {
    let done = false;
    const finish = (aborted: boolean) => {
      if (done) return;
      done = true;
      const durationMs = Number(process.hrtime.bigint() - req.startedAt) / 1e6;
      const status = aborted && !res.headersSent ? 499 : res.statusCode;
      const path = req.path.slice(0, MAX_PATH);
      audit.record({
        requestId: req.requestId,
        workspaceId: req.auth?.workspaceId ?? null,
        apiKeyId: req.auth?.apiKeyId ?? null,
        method: req.method,
        path,
        status,
        durationMs: Math.round(durationMs),
        ip: req.ip ?? null,
        userAgent: req.get('user-agent')?.slice(0, MAX_USER_AGENT) ?? null,
      });
      logger.info(
        {
          request_id: req.requestId,
          method: req.method,
          path,
          status,
          duration_ms: Math.round(durationMs * 10) / 10,
          workspace_id: req.auth?.workspaceId,
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

import {
  AUDIT_PAGE_SIZE,
  type AuditLogEntry,
  type AuditLogPage,
  type AuditLogQuery,
} from '@mnemo/contract';
import type { Database } from '../../db/client.js';
import { pageAuditRecords } from '../../db/queries/audit.js';
import type { AuditRecord } from '../../db/schema/index.js';

/** `404` → 404..404, `4xx` → 400..499. */
function statusRange(status: string): { min: number; max: number } {
  if (status.endsWith('xx')) {
    const base = Number(status[0]) * 100;
    return { min: base, max: base + 99 };
  }
  return { min: Number(status), max: Number(status) };
}

/** The contract's pattern form: `/v1/memories/{id}` (OpenAPI) reads as `/v1/memories/:id`. */
export function normaliseRoutePattern(route: string): string {
  return route.replace(/\{([^}/]+)\}/g, ':$1');
}

function toEntry(row: AuditRecord): AuditLogEntry {
  return {
    id: row.id,
    request_id: row.requestId,
    api_key_id: row.apiKeyId,
    method: row.method,
    path: row.path,
    route: row.route,
    status: row.status,
    duration_ms: row.durationMs,
    ip: row.ip,
    user_agent: row.userAgent,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * A page of the caller's audit log, newest first. The rows are only ever the caller's workspace:
 * the workspace comes from the credentials, never from the query. Records are written off the
 * response path in batches, so the last few tens of milliseconds may not show yet.
 */
export async function listAuditLog(
  db: Database,
  workspaceId: string,
  query: AuditLogQuery,
): Promise<AuditLogPage> {
  const page = query.page ?? 1;
  const pageSize = query.page_size ?? AUDIT_PAGE_SIZE.default;
  const { rows, total } = await pageAuditRecords(
    db,
    {
      workspaceId,
      ...(query.from ? { from: new Date(query.from) } : {}),
      ...(query.to ? { to: new Date(query.to) } : {}),
      ...(query.route ? { route: normaliseRoutePattern(query.route) } : {}),
      ...(query.method ? { method: query.method } : {}),
      ...(query.status ? { status: statusRange(query.status) } : {}),
    },
    { offset: (page - 1) * pageSize, limit: pageSize },
  );
  return {
    results: rows.map(toEntry),
    page,
    page_size: pageSize,
    total,
    has_more: page * pageSize < total,
  };
}

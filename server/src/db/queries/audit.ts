import { type SQL, and, desc, eq } from 'drizzle-orm';
import type { Database } from '../client.js';
import { type AuditRecord, type NewAuditRecord, auditLog } from '../schema/index.js';

export const DEFAULT_AUDIT_LIST_LIMIT = 100;
export const MAX_AUDIT_LIST_LIMIT = 1000;

/** One multi-row insert: the recorder batches requests' records. */
export async function insertAuditRecords(db: Database, records: NewAuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.insert(auditLog).values(records);
}

export interface ListAuditRecordsOptions {
  workspaceId?: string;
  requestId?: string;
  /** Defaults to {@link DEFAULT_AUDIT_LIST_LIMIT}, capped at {@link MAX_AUDIT_LIST_LIMIT}. */
  limit?: number;
}

/** Audit records, newest first, optionally narrowed to a workspace and/or a request id. */
export async function listAuditRecords(
  db: Database,
  options: ListAuditRecordsOptions = {},
): Promise<AuditRecord[]> {
  const conditions: SQL[] = [];
  if (options.workspaceId !== undefined)
    conditions.push(eq(auditLog.workspaceId, options.workspaceId));
  if (options.requestId !== undefined) conditions.push(eq(auditLog.requestId, options.requestId));
  const limit = Math.min(
    Math.max(Math.trunc(options.limit ?? DEFAULT_AUDIT_LIST_LIMIT), 1),
    MAX_AUDIT_LIST_LIMIT,
  );
  return db
    .select()
    .from(auditLog)
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(limit);
}

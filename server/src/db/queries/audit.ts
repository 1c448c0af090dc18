import { type SQL, and, count, desc, eq, gte, lt, lte } from 'drizzle-orm';
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

export interface AuditPageFilter {
  workspaceId: string;
  from?: Date;
  to?: Date;
  route?: string;
  method?: string;
  /** Inclusive status range: one code (404..404) or a class (400..499). */
  status?: { min: number; max: number };
}

/**
 * One page of a workspace's audit records, newest first, and how many match in all. Always
 * scoped to one workspace: the (workspace_id, created_at) index serves both queries.
 */
export async function pageAuditRecords(
  db: Database,
  filter: AuditPageFilter,
  { offset, limit }: { offset: number; limit: number },
): Promise<{ rows: AuditRecord[]; total: number }> {
  const conditions: SQL[] = [eq(auditLog.workspaceId, filter.workspaceId)];
  if (filter.from) conditions.push(gte(auditLog.createdAt, filter.from));
  if (filter.to) conditions.push(lt(auditLog.createdAt, filter.to));
  if (filter.route !== undefined) conditions.push(eq(auditLog.route, filter.route));
  if (filter.method !== undefined) conditions.push(eq(auditLog.method, filter.method));
  if (filter.status) {
    conditions.push(
      gte(auditLog.status, filter.status.min),
      lte(auditLog.status, filter.status.max),
    );
  }
  const where = and(...conditions);
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(auditLog)
      .where(where)
      .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
      .offset(offset)
      .limit(limit),
    db.select({ total: count() }).from(auditLog).where(where),
  ]);
  return { rows, total: counted?.total ?? 0 };
}

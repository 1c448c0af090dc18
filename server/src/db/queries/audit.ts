import type { Reader } from '../client.js';
import { type SQL, and, count, desc, eq, gte, lt, lte } from 'drizzle-orm';
import { type AuditRecord, type NewAuditRecord, auditLog } from '../schema/index.js';
import { Statement, type Queryable } from './statement.js';

export const DEFAULT_AUDIT_LIST_LIMIT = 100;
export const MAX_AUDIT_LIST_LIMIT = 1000;

const insertAuditRecordsStatement = new Statement<{
  requestIds: string[];
  workspaceIds: Array<string | null>;
  apiKeyIds: Array<string | null>;
  methods: string[];
  paths: string[];
  routes: Array<string | null>;
  statuses: number[];
  durations: number[];
  ips: Array<string | null>;
  userAgents: Array<string | null>;
  createdAts: string[];
}>(`
  insert into audit_log (request_id, workspace_id, api_key_id, method, path, route, status,
    duration_ms, ip, user_agent, created_at)
  select * from unnest(:requestIds::text[], :workspaceIds::uuid[], :apiKeyIds::uuid[],
    :methods::text[], :paths::text[], :routes::text[], :statuses::int[], :durations::int[],
    :ips::text[], :userAgents::text[], :createdAts::text[]::timestamptz[])`);

/**
 * One insert per batch (the recorder batches requests' records), as a prepared statement with one
 * array per column: the same text for any batch, parsed once per connection (see
 * insertLearningSignals).
 */
export async function insertAuditRecords(db: Queryable, records: NewAuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  const now = new Date().toISOString();
  await insertAuditRecordsStatement.run(db, {
    requestIds: records.map((record) => record.requestId),
    workspaceIds: records.map((record) => record.workspaceId ?? null),
    apiKeyIds: records.map((record) => record.apiKeyId ?? null),
    methods: records.map((record) => record.method),
    paths: records.map((record) => record.path),
    routes: records.map((record) => record.route ?? null),
    statuses: records.map((record) => record.status),
    durations: records.map((record) => record.durationMs),
    ips: records.map((record) => record.ip ?? null),
    userAgents: records.map((record) => record.userAgent ?? null),
    createdAts: records.map((record) => record.createdAt?.toISOString() ?? now),
  });
}

export interface ListAuditRecordsOptions {
  workspaceId?: string;
  requestId?: string;
  /** Defaults to {@link DEFAULT_AUDIT_LIST_LIMIT}, capped at {@link MAX_AUDIT_LIST_LIMIT}. */
  limit?: number;
}

/** Audit records, newest first, optionally narrowed to a workspace and/or a request id. */
export async function listAuditRecords(
  db: Reader,
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
  db: Reader,
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

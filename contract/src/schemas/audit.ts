import { z } from 'zod';
import { IsoTimestamp, PageFields, PgString } from './common.js';
import { INPUT_BOUNDS } from './limits.js';

/** Rows per page of the audit log: default and bounds. */
export const AUDIT_PAGE_SIZE = { min: 1, max: 200, default: 50 } as const;

const queryInt = (min: number, max: number) =>
  z.coerce.number({ invalid_type_error: 'must be an integer' }).int().min(min).max(max);

/** A status code (`404`) or a class of them (`4xx`). */
export const AuditStatusFilter = z
  .string()
  .regex(/^[1-5](\d\d|xx)$/i, 'must be a status code (404) or a class (4xx)')
  .transform((value) => value.toLowerCase());

export const AuditLogQuery = z
  .object({
    page: queryInt(INPUT_BOUNDS.page.min, INPUT_BOUNDS.page.max).optional(),
    page_size: queryInt(AUDIT_PAGE_SIZE.min, AUDIT_PAGE_SIZE.max).optional(),
    /** Rows at or after this instant. */
    from: IsoTimestamp.optional(),
    /** Rows before this instant. */
    to: IsoTimestamp.optional(),
    /**
     * A route pattern of the contract: `/v1/memories/:id` (the OpenAPI form `/v1/memories/{id}`
     * is accepted too). Requests no route matched have no pattern.
     */
    route: PgString.pipe(z.string().min(1).max(256)).optional(),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional(),
    status: AuditStatusFilter.optional(),
  })
  // A misspelt filter must not silently return every row.
  .strict()
  .refine((q) => !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to), {
    message: 'from must not be after to',
    path: ['from'],
  });
export type AuditLogQuery = z.infer<typeof AuditLogQuery>;

/** One request as the audit log keeps it: no credentials, no bodies, no query strings. */
export const AuditLogEntry = z.object({
  id: z.string().uuid(),
  request_id: z.string(),
  /** The key that made the request; null for a dashboard session or an internal subrequest. */
  api_key_id: z.string().uuid().nullable(),
  method: z.string(),
  /** The path without its query string. */
  path: z.string(),
  /** The contract's route pattern; null when no route matched. */
  route: z.string().nullable(),
  status: z.number().int(),
  duration_ms: z.number().int().min(0),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  created_at: z.string(),
});
export type AuditLogEntry = z.infer<typeof AuditLogEntry>;

export const AuditLogPage = PageFields.extend({
  results: z.array(AuditLogEntry),
  page_size: z.number().int().min(1),
});
export type AuditLogPage = z.infer<typeof AuditLogPage>;

import { PII_SCAN_HEADER, SAVE_HISTORY_HEADER } from '@mnemo/contract';
import type { Request } from 'express';
import { auditFields } from './completion.js';

/** This request's audit record as a write stores it in its own transaction. */
export type WriteAudit = ReturnType<typeof auditFields> & { startedAt: bigint };

/**
 * What an HTTP request says about a call besides its body. REST handlers and MCP tools read it
 * here, from the request that carries the call, so that both doors honour the same headers the
 * same way and audit the same fields.
 */
export interface RequestInputs {
  /** The `x-request-id`: keys learning signals, and feedback names it. */
  requestId: string;
  /** `x-save-history: 1` or `true`: a search stores its query in the saved history. */
  saveHistory: boolean;
  /** `x-safety-pii-scan: 1`: a write reports the email and phone hints it finds. */
  piiScan: boolean;
  /** The audit record a write stores with the memory, in one transaction. */
  audit: WriteAudit;
}

export function requestInputs(req: Request): RequestInputs {
  const saveHistory = req.get(SAVE_HISTORY_HEADER);
  return {
    requestId: req.requestId,
    saveHistory: saveHistory === '1' || saveHistory?.toLowerCase() === 'true',
    piiScan: req.get(PII_SCAN_HEADER) === '1',
    audit: { ...auditFields(req), startedAt: req.startedAt },
  };
}

/**
 * Notes that a handler's transaction wrote this request's audit record, so that completion does
 * not write a second one. It never unsets: a replay (which writes none) must not undo the record
 * an earlier call on the same HTTP request wrote.
 */
export function markAudited(req: Request, audited: boolean): void {
  req.auditRecorded = req.auditRecorded === true || audited;
}

import { initContract } from '@ts-rest/core';
import {
  ErasePayload,
  ErasureReceipt,
  ExportQuery,
  ExportStream,
  ImportBody,
  ImportQuery,
  ImportResponse,
  JSONL_CONTENT_TYPE,
} from '../schemas/owner-data.js';
import { ErrorEnvelope } from '../schemas/common.js';
import { TENANT_OPERATOR, type RouteMetadata } from './auth.js';

const c = initContract();

/**
 * An owner's data as a whole (operator routes, outside the published contract): export it as
 * JSON Lines, import such a file into another workspace or server, erase it with a receipt.
 * See docs/export.md.
 */
export const ownerDataContract = c.router(
  {
    exportOwner: {
      method: 'GET',
      path: '/export',
      query: ExportQuery,
      responses: {
        200: c.otherResponse({ contentType: JSONL_CONTENT_TYPE, body: ExportStream }),
      },
      metadata: TENANT_OPERATOR,
      summary:
        'Export the memories of an owner (or of the workspace) as JSON Lines, streamed and resumable',
    },
    importOwner: {
      method: 'POST',
      path: '/import',
      query: ImportQuery,
      body: ImportBody,
      // 402 TRIAL_EXPIRED: no plan in force (imports are metered like writes).
      responses: { 200: ImportResponse, 402: ErrorEnvelope, 409: ErrorEnvelope },
      metadata: {
        ...TENANT_OPERATOR,
        requestContentType: JSONL_CONTENT_TYPE,
        quota: ['writes', 'storage_bytes', 'embeds', 'embed_tokens'],
        audit: 'after',
      } satisfies RouteMetadata,
      summary:
        'Import the lines of an export: ids and history kept, idempotent, atomic per batch of lines',
    },
    eraseOwner: {
      method: 'POST',
      path: '/erase',
      body: ErasePayload,
      responses: { 200: ErasureReceipt },
      metadata: { ...TENANT_OPERATOR, events: ['owner.erased'] } satisfies RouteMetadata,
      summary:
        'Erase an owner: memories, chunks, links, pins, signals, history and audit text; returns a receipt',
    },
  },
  { pathPrefix: '/v1' },
);

import { initContract } from '@ts-rest/core';
import {
  ConversationIngestPayload,
  ConversationIngestResponse,
  IngestPayload,
  IngestResponse,
} from '../schemas/ingest.js';
import { ErrorEnvelope } from '../schemas/common.js';
import { MEMORY_WRITE, TENANT_OPERATOR, type RouteMetadata } from './auth.js';

const c = initContract();

/**
 * Conversation and generic ingest (operator routes of the spec, outside the published contract):
 * each stores memories through the same write pipeline as POST /v1/memories. See docs/ingest.md.
 * The pipeline's request headers (`x-safety-pii-scan`) are read from the request as there.
 */
export const ingestContract = c.router(
  {
    ingestConversation: {
      method: 'POST',
      path: '/memories/conversation',
      body: ConversationIngestPayload,
      // 402 TRIAL_EXPIRED: no plan in force (metered like POST /v1/memories).
      responses: { 200: ConversationIngestResponse, 402: ErrorEnvelope },
      metadata: {
        ...TENANT_OPERATOR,
        cost: 'conversation',
        ...MEMORY_WRITE,
      } satisfies RouteMetadata,
      summary: 'Store a conversation (messages or a transcript) as memories, turn by turn',
    },
    ingest: {
      method: 'POST',
      path: '/ingest',
      body: IngestPayload,
      responses: { 200: IngestResponse, 402: ErrorEnvelope },
      metadata: {
        ...TENANT_OPERATOR,
        cost: 'ingest',
        ...MEMORY_WRITE,
      } satisfies RouteMetadata,
      summary: 'Store a memory, a conversation or a document (split into sections and pieces)',
    },
  },
  { pathPrefix: '/v1' },
);

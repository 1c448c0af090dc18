import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  ContextPayload,
  ContextResponse,
  FeedbackPayload,
  FeedbackResponse,
  SearchPayload,
  SearchResponse,
} from '../schemas/search.js';
import { ErrorEnvelope } from '../schemas/common.js';
import { TENANT, type RouteMetadata } from './auth.js';

const c = initContract();

/** `1` or `true` stores the query in the saved search history. */
export const SAVE_HISTORY_HEADER = 'x-save-history';

export const SearchHeaders = z.object({
  [SAVE_HISTORY_HEADER]: z.string().optional(),
});

export const searchContract = c.router(
  {
    searchMemories: {
      method: 'POST',
      path: '/search',
      headers: SearchHeaders,
      body: SearchPayload,
      // 402 TRIAL_EXPIRED: no plan in force (a metered route).
      responses: { 200: SearchResponse, 402: ErrorEnvelope },
      metadata: {
        ...TENANT,
        cost: 'query',
        quota: ['reads', 'embeds', 'embed_tokens'],
        mcpTool: 'search_memories',
      } satisfies RouteMetadata,
      summary: 'Hybrid search over an owner’s memories',
    },
    getContext: {
      method: 'POST',
      path: '/context',
      body: ContextPayload,
      responses: { 200: ContextResponse, 402: ErrorEnvelope },
      metadata: {
        ...TENANT,
        cost: 'query',
        quota: ['reads', 'embeds', 'embed_tokens'],
        mcpTool: 'get_context',
      } satisfies RouteMetadata,
      summary: 'Prompt-ready context with numbered citations',
    },
    sendFeedback: {
      method: 'POST',
      path: '/feedback',
      body: FeedbackPayload,
      responses: { 200: FeedbackResponse },
      metadata: {
        ...TENANT,
        events: ['search.feedback'],
        mcpTool: 'send_feedback',
      } satisfies RouteMetadata,
      summary: 'Explicit positive or negative signal for an earlier search or context call',
    },
  },
  { pathPrefix: '/v1' },
);

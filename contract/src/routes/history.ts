import { initContract } from '@ts-rest/core';
import {
  ContextFeedbackPayload,
  ContextFeedbackResponse,
  ReplaySearchPayload,
  ReplaySearchResponse,
  SearchHistoryQuery,
  SearchHistoryResponse,
} from '../schemas/history.js';
import { ErrorEnvelope } from '../schemas/common.js';
import { TENANT_OPERATOR, type RouteMetadata } from './auth.js';

const c = initContract();

/**
 * What became of earlier searches and context calls (operator routes of the spec, outside the
 * published contract): the saved search history, its replay, and feedback rows on context
 * responses. See docs/links-history-pins.md.
 */
export const historyContract = c.router(
  {
    getSearchHistory: {
      method: 'GET',
      path: '/search/history',
      query: SearchHistoryQuery,
      responses: { 200: SearchHistoryResponse },
      metadata: TENANT_OPERATOR,
      summary: 'Saved searches (sent with x-save-history: 1), newest first',
    },
    replaySearch: {
      method: 'POST',
      path: '/search/replay',
      body: ReplaySearchPayload,
      responses: { 200: ReplaySearchResponse, 409: ErrorEnvelope },
      metadata: {
        ...TENANT_OPERATOR,
        cost: 'replay',
        quota: ['reads', 'embeds', 'embed_tokens'],
      } satisfies RouteMetadata,
      summary: 'Run a saved search again, metered like a search',
    },
    sendContextFeedback: {
      method: 'POST',
      path: '/context/feedback',
      body: ContextFeedbackPayload,
      responses: { 200: ContextFeedbackResponse },
      metadata: TENANT_OPERATOR,
      summary:
        'Feedback on a context response: a rating, helpful and unhelpful memories, a comment',
    },
  },
  { pathPrefix: '/v1' },
);

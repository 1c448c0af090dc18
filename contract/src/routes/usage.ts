import { initContract } from '@ts-rest/core';
import {
  MemoryBreakdownResponse,
  UsageHistoryQuery,
  UsageHistoryResponse,
  UsageResponse,
} from '../schemas/usage.js';
import { TENANT } from './auth.js';

const c = initContract();

export const usageContract = c.router(
  {
    getUsageToday: {
      method: 'GET',
      path: '/usage/today',
      responses: { 200: UsageResponse },
      metadata: TENANT,
      summary: 'Today’s consumption, the effective limits and cap alerts of the workspace',
    },
    getUsageHistory: {
      method: 'GET',
      path: '/usage/history',
      query: UsageHistoryQuery,
      responses: { 200: UsageHistoryResponse },
      metadata: TENANT,
      summary:
        'Requests, rate-limited requests, writes, reads and embeds per UTC day (last 30 days)',
    },
    getMemoryBreakdown: {
      method: 'GET',
      path: '/usage/memories',
      responses: { 200: MemoryBreakdownResponse },
      metadata: TENANT,
      summary: 'Stored memories by lifecycle state and by owner (largest owners first)',
    },
  },
  { pathPrefix: '/v1' },
);

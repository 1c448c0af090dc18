import { initContract } from '@ts-rest/core';
import { UsageResponse } from '../schemas/usage.js';
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
  },
  { pathPrefix: '/v1' },
);

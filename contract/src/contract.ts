import { initContract } from '@ts-rest/core';
import { adminContract } from './routes/admin.js';
import { billingContract } from './routes/billing.js';
import { dashboardContract } from './routes/dashboard.js';
import { healthContract } from './routes/health.js';
import { ingestContract } from './routes/ingest.js';
import { memoriesContract } from './routes/memories.js';
import { searchContract } from './routes/search.js';
import { usageContract } from './routes/usage.js';
import { ErrorEnvelope } from './schemas/common.js';

const c = initContract();

export const CONTRACT_VERSION = '1.0.0';

/**
 * The whole REST interface. Every area is nested; errors share one envelope. Routes whose
 * metadata says `operator` (the admin area) are outside the published contract.
 */
export const contract = c.router(
  {
    health: healthContract,
    memories: memoriesContract,
    search: searchContract,
    usage: usageContract,
    billing: billingContract,
    dashboard: dashboardContract,
    admin: adminContract,
    ingest: ingestContract,
  },
  {
    strictStatusCodes: true,
    commonResponses: {
      400: ErrorEnvelope,
      401: ErrorEnvelope,
      403: ErrorEnvelope,
      404: ErrorEnvelope,
      413: ErrorEnvelope,
      429: ErrorEnvelope,
      500: ErrorEnvelope,
      503: ErrorEnvelope,
    },
  },
);

export type Contract = typeof contract;

import { initContract } from '@ts-rest/core';
import { adminContract } from './routes/admin.js';
import { apiKeysContract } from './routes/api-keys.js';
import { auditContract } from './routes/audit.js';
import { connectorsContract } from './routes/connectors.js';
import { workspacesContract } from './routes/workspaces.js';
import { billingContract } from './routes/billing.js';
import { dashboardContract } from './routes/dashboard.js';
import { healthContract } from './routes/health.js';
import { ingestContract } from './routes/ingest.js';
import { historyContract } from './routes/history.js';
import { linksContract } from './routes/links.js';
import { pinsContract } from './routes/pins.js';
import { memoriesContract } from './routes/memories.js';
import { ownerDataContract } from './routes/owner-data.js';
import { searchContract } from './routes/search.js';
import { usageContract } from './routes/usage.js';
import { webhooksContract } from './routes/webhooks.js';
import { ErrorEnvelope } from './schemas/common.js';

const c = initContract();

/**
 * The error envelope's schema under a name of its own: declarations then refer to it by name
 * instead of spelling it out for every status of every route, which passes the length tsc will
 * serialize for {@link contract}.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the name is the point
interface ErrorEnvelopeSchema extends ErrorEnvelopeType {}
type ErrorEnvelopeType = typeof ErrorEnvelope;
const envelope: ErrorEnvelopeSchema = ErrorEnvelope;

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
    links: linksContract,
    history: historyContract,
    pins: pinsContract,
    audit: auditContract,
    connectors: connectorsContract,
    workspaces: workspacesContract,
    apiKeys: apiKeysContract,
    ownerData: ownerDataContract,
    webhooks: webhooksContract,
  },
  {
    strictStatusCodes: true,
    commonResponses: {
      400: envelope,
      401: envelope,
      403: envelope,
      404: envelope,
      413: envelope,
      429: envelope,
      500: envelope,
      503: envelope,
    },
  },
);

export type Contract = typeof contract;

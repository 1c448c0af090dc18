import { initContract } from '@ts-rest/core';
import { AuditLogPage, AuditLogQuery } from '../schemas/audit.js';
import { PruningMetrics, PruningMetricsQuery } from '../schemas/pruning.js';
import { TENANT_OPERATOR } from './auth.js';

const c = initContract();

/** The caller's audit log and pruning metrics (operator routes, K or S). See docs/operator.md. */
export const auditContract = c.router(
  {
    getAuditLog: {
      method: 'GET',
      path: '/audit/log',
      query: AuditLogQuery,
      responses: { 200: AuditLogPage },
      metadata: TENANT_OPERATOR,
      summary: "The workspace's audit records, newest first, filtered by time, route and status",
    },
    getPruningMetrics: {
      method: 'GET',
      path: '/pruning/metrics',
      query: PruningMetricsQuery,
      responses: { 200: PruningMetrics },
      metadata: TENANT_OPERATOR,
      summary: "Memory, duplicate and chunk counts of the caller's workspace",
    },
  },
  { pathPrefix: '/v1' },
);

import { initContract } from '@ts-rest/core';
import { HealthResponse, ReadyResponse, VersionedHealthResponse } from '../schemas/health.js';
import { PUBLIC } from './auth.js';

const c = initContract();

export const healthContract = c.router({
  getHealth: {
    method: 'GET',
    path: '/healthz',
    responses: { 200: HealthResponse },
    metadata: PUBLIC,
    summary: 'Liveness: the service is up',
  },
  getVersionedHealth: {
    method: 'GET',
    path: '/v1/health',
    responses: { 200: VersionedHealthResponse },
    metadata: PUBLIC,
    summary: 'Liveness with the embedding model in use',
  },
  getReadiness: {
    method: 'GET',
    path: '/ready',
    responses: { 200: ReadyResponse, 503: ReadyResponse },
    metadata: PUBLIC,
    summary: 'Readiness: the database answers and the API-key salt can be read',
  },
});

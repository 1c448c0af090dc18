import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../deps.js';
import { health, readiness, versionedHealth } from '../services/health.js';

const s = initServer();

export function healthRoutes(deps: AppDeps) {
  return s.router(contract.health, {
    getHealth: async () => ({ status: 200, body: health(deps.config) }),
    getVersionedHealth: async () => ({
      status: 200,
      body: versionedHealth(deps.config, deps.embeddings),
    }),
    getReadiness: async () => {
      const body = await readiness(deps);
      return body.status === 'ready' ? { status: 200, body } : { status: 503, body };
    },
  });
}

import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { AppConfig } from '../config.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
import { health, readiness, versionedHealth } from '../services/health.js';

const s = initServer();

/** What health and readiness report on. */
export type HealthRouteDeps = Parameters<typeof readiness>[0] & {
  config: AppConfig;
  embeddings: EmbeddingProvider;
};

export function healthRoutes(deps: HealthRouteDeps) {
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

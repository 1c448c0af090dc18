import type { HealthResponse, ReadyResponse, VersionedHealthResponse } from '@mnemo/contract';
import type { AppConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
import type { LimitBackend } from '../limits/backend.js';
import type { ApiKeyService } from './api-keys/index.js';

export function health(config: AppConfig): HealthResponse {
  return {
    status: 'ok',
    version: config.version,
    ...(config.buildVersion ? { build_version: config.buildVersion } : {}),
    ...(config.stage ? { stage: config.stage } : {}),
    ...(config.gitSha ? { git_sha: config.gitSha } : {}),
  };
}

export function versionedHealth(
  config: AppConfig,
  embeddings: EmbeddingProvider,
): VersionedHealthResponse {
  return { ...health(config), embedding_model: `${embeddings.provider}/${embeddings.model}` };
}

/** A probe that has not answered by then counts as failed: /ready answers within this bound. */
const PROBE_TIMEOUT_MS = 2000;

async function check(probe: () => Promise<boolean>): Promise<'ok' | 'error'> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  try {
    return (await Promise.race([probe(), timedOut])) ? 'ok' : 'error';
  } catch {
    return 'error';
  } finally {
    clearTimeout(timer);
  }
}

/** Set at SIGTERM: from then on /ready answers 503 while requests are still served. */
export interface DrainState {
  draining: boolean;
}

export async function readiness(deps: {
  database: DatabaseHandle;
  apiKeys: ApiKeyService;
  limits: Pick<LimitBackend, 'ping'>;
  drain?: DrainState;
}): Promise<ReadyResponse> {
  const [database, keySalt, redis] = await Promise.all([
    check(async () => {
      await deps.database.ping();
      return true;
    }),
    check(() => deps.apiKeys.checkSalt()),
    deps.limits.ping ? check(deps.limits.ping) : undefined,
  ]);
  // A stopping instance is out of rotation whatever its dependencies say.
  const draining = deps.drain?.draining === true;
  const ready = !draining && database === 'ok' && keySalt === 'ok' && redis !== 'error';
  return {
    status: ready ? 'ready' : 'not_ready',
    ...(draining ? { draining } : {}),
    checks: { database, key_salt: keySalt, ...(redis ? { redis } : {}) },
  };
}

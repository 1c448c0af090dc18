import type { HealthResponse, ReadyResponse, VersionedHealthResponse } from '@mnemo/contract';
import type { AppConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
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

export async function readiness(deps: {
  database: DatabaseHandle;
  apiKeys: ApiKeyService;
}): Promise<ReadyResponse> {
  const [database, keySalt] = await Promise.all([
    check(async () => {
      await deps.database.ping();
      return true;
    }),
    check(() => deps.apiKeys.checkSalt()),
  ]);
  const ready = database === 'ok' && keySalt === 'ok';
  return { status: ready ? 'ready' : 'not_ready', checks: { database, key_salt: keySalt } };
}

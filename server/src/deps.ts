import type { AppDeps } from './app.js';
import type { AppConfig } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { StatisticsKeeper } from './db/statistics.js';
import type { Logger } from './logger.js';
import { ApiKeyService } from './services/api-keys.js';
import { createEmbeddingProvider } from './providers/embeddings/index.js';
import { createReranker } from './providers/rerank/index.js';
import { AuditRecorder } from './services/audit.js';
import { BackgroundTasks } from './services/background.js';
import { unlimitedQuota } from './services/quota.js';

/** The services every door (REST now, MCP later) shares, over one open database. */
export async function createDeps(config: AppConfig, logger: Logger, database: DatabaseHandle): Promise<AppDeps> {
  const apiKeys = await ApiKeyService.create(database.db, { salt: config.apiKeySalt });
  const audit = new AuditRecorder(database.db, logger);
  const embeddings = createEmbeddingProvider(config.embeddings);
  const statistics = new StatisticsKeeper(database, logger);
  await statistics.analyze();
  return {
    config,
    logger,
    database,
    apiKeys,
    audit,
    embeddings,
    quota: unlimitedQuota,
    reranker: createReranker(config.rerank),
    background: new BackgroundTasks(logger),
    statistics,
  };
}

import type { AppConfig } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { StatisticsKeeper } from './db/statistics.js';
import type { Logger } from './logger.js';
import { createLimitBackend, type LimitBackend } from './limits/backend.js';
import { McpSessionStore } from './mcp/sessions.js';
import { ApiKeyService } from './services/api-keys.js';
import { createEmbeddingProvider } from './providers/embeddings/index.js';
import { createReranker } from './providers/rerank/index.js';
import { AuditRecorder } from './services/audit.js';
import type { Extractor } from './providers/extraction/index.js';
import type { QuotaGate } from './services/quota.js';
import type { EmbeddingProvider } from './providers/embeddings/index.js';
import type { Reranker } from './providers/rerank/index.js';
import { BackgroundTasks } from './services/background.js';
import { unlimitedQuota } from './services/quota.js';
import { PlanService } from './services/plans.js';
import { billingEntitlements } from './services/billing.js';
import { createMeteredQuota } from './services/usage.js';
import { createExtractor } from './providers/extraction/index.js';
import type { MemoryWriteDeps } from './services/memory-write.js';
import type { SearchDeps } from './services/retrieval/search.js';

/**
 * Everything the HTTP app, the MCP server and the jobs share: built once by {@link createDeps}
 * (or by a test), passed down. Declared here, beside its builder, so imports run one way.
 */
export interface AppDeps {
  config: AppConfig;
  logger: Logger;
  database: DatabaseHandle;
  apiKeys: ApiKeyService;
  audit: AuditRecorder;
  /** Embeds memories on write and queries on search: one provider for both. */
  embeddings: EmbeddingProvider;
  /** Metering of writes, reads and AI work against the workspace's plan (MNEMO_LIMITS). */
  quota: QuotaGate;
  /** Each workspace's effective plan, from its entitlement (cached briefly). */
  plans: PlanService;
  /** Undefined: no rerank step. */
  reranker: Reranker | undefined;
  /** Splits memories into child memories; undefined when extraction is off. */
  extractor: Extractor | undefined;
  /** Learning signals and search history: off the response path. */
  background: BackgroundTasks;
  statistics: StatisticsKeeper;
  /** Rate-limit counters and in-flight leases: in memory, or on Redis across instances. */
  limits: LimitBackend;
  /** Open hosted-MCP sessions; closed on shutdown. */
  mcpSessions: McpSessionStore;
}

/** The services every door (REST and MCP) shares, over one open database. */
export async function createDeps(
  config: AppConfig,
  logger: Logger,
  database: DatabaseHandle,
): Promise<AppDeps> {
  const apiKeys = await ApiKeyService.create(database.db, { salt: config.apiKeySalt });
  const audit = new AuditRecorder(database.db, logger);
  const embeddings = createEmbeddingProvider(config.embeddings, undefined, (message) =>
    logger.warn(message),
  );
  const statistics = new StatisticsKeeper(database, logger);
  // With billing on, plans come from payments only (a payment awaiting verification reads as
  // degraded); a self-hosted install without billing grants every workspace its internal plan.
  const billingOn = config.billing.provider !== 'none';
  const plans = new PlanService(database.db, {
    internalGrantPlan: billingOn ? undefined : config.limits.internalGrantPlan,
    internalGrantRetention: config.limits.internalGrantRetention,
    ...(billingOn ? { loader: billingEntitlements(database.db, undefined) } : {}),
    logger,
  });
  await statistics.start();
  return {
    config,
    logger,
    database,
    apiKeys,
    audit,
    embeddings,
    quota: config.limits.enabled
      ? createMeteredQuota({
          db: database.db,
          plans,
          reservationTtlMs: config.limits.reservationTtlMs,
          blocks: config.limits.blocks,
          logger,
        })
      : unlimitedQuota,
    plans,
    reranker: createReranker(config.rerank),
    extractor:
      config.extraction.provider === 'none'
        ? undefined
        : createExtractor({
            provider: config.extraction.provider,
            ...(config.extraction.baseUrl ? { baseUrl: config.extraction.baseUrl } : {}),
            ...(config.extraction.apiKey ? { apiKey: config.extraction.apiKey } : {}),
            ...(config.extraction.model ? { model: config.extraction.model } : {}),
            timeoutMs: config.extraction.timeoutMs,
          }),
    background: new BackgroundTasks(logger),
    statistics,
    limits: await createLimitBackend({
      redisUrl: config.rateLimits.redisUrl,
      onConnectError: (err) =>
        logger.warn({ err }, 'Redis unreachable at start; limits fail open until it answers'),
    }),
    mcpSessions: new McpSessionStore({
      ttlMs: config.mcp.sessionTtlMs,
      maxSessions: config.mcp.maxSessions,
      logger,
    }),
  };
}

/** What the write pipeline needs, the same for REST and MCP. */
export function memoryWriteDeps(deps: AppDeps): MemoryWriteDeps {
  return {
    db: deps.database.db,
    embeddings: deps.embeddings,
    quota: deps.quota,
    config: deps.config,
    extractor: deps.extractor,
    onRowsWritten: (rows) => deps.statistics.noteChanges(rows),
  };
}

/** What search and context need, the same for REST and MCP. */
export function searchDeps(deps: AppDeps): SearchDeps {
  return {
    reader: deps.database.reader,
    writer: deps.database.writer,
    embeddings: deps.embeddings,
    reranker: deps.reranker,
    background: deps.background,
    logger: deps.logger,
    explain: deps.config.searchExplain,
    episodeWindowSeconds: deps.config.episodeWindowSeconds,
    quota: deps.quota,
  };
}

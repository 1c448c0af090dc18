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
  embeddings: { provider: 'local' | 'openai'; model: string };
  version: string;
  buildVersion: string | undefined;
  stage: string | undefined;
  gitSha: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
}

export const SERVER_VERSION = '0.1.0';

const DEFAULT_EMBEDDING_MODEL = { local: 'mnemo-local-v1', openai: 'text-embedding-3-small' } as const;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
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
    },
    version: SERVER_VERSION,
    buildVersion: e.BUILD_VERSION,
    stage: e.MNEMO_STAGE,
    gitSha: e.GIT_SHA,
    logLevel: e.LOG_LEVEL,
  };
}

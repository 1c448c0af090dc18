import { z } from 'zod';

export const HealthResponse = z.object({
  status: z.literal('ok'),
  version: z.string(),
  build_version: z.string().optional(),
  stage: z.string().optional(),
  git_sha: z.string().optional(),
});
export type HealthResponse = z.infer<typeof HealthResponse>;

export const VersionedHealthResponse = HealthResponse.extend({
  /** The embedding model new memories and queries are embedded with, as `provider/model`. */
  embedding_model: z.string(),
});
export type VersionedHealthResponse = z.infer<typeof VersionedHealthResponse>;

const CheckStatus = z.enum(['ok', 'error']);

/** Readiness: the body is not fixed by the spec; this one names each check. */
export const ReadyResponse = z.object({
  status: z.enum(['ready', 'not_ready']),
  /** True once the instance is stopping: it still serves, but wants no new requests. */
  draining: z.boolean().optional(),
  checks: z.object({
    database: CheckStatus,
    key_salt: CheckStatus,
    /** The shared limit store; present when REDIS_URL is set. */
    redis: CheckStatus.optional(),
  }),
});
export type ReadyResponse = z.infer<typeof ReadyResponse>;

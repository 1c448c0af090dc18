import { z } from 'zod';

const Count = z.number().int().min(0);

/** No parameters: the workspace is the caller's; an unknown parameter is a 400, not ignored. */
export const PruningMetricsQuery = z.object({}).strict();

/** `GET /v1/pruning/metrics`: what pruning has to work with in the caller's workspace. */
export const PruningMetrics = z.object({
  workspace_id: z.string().uuid(),
  memories: z.object({
    total: Count,
    active: Count,
    replaced: Count,
    archived: Count,
    /** Active memories whose `expires_at` has passed: the next hygiene run archives them. */
    expired_pending: Count,
  }),
  duplicates: z.object({
    /**
     * Active memories with the same text (content hash) as an older active memory of the same
     * owner: exact duplicates still live (writes dedupe, so normally 0).
     */
    exact_active: Count,
    /** Memories superseded as duplicates so far, by the rule that found them. */
    superseded: z.object({
      /** Near duplicates found by the hygiene job. */
      hygiene_duplicate: Count,
      /** Near duplicates found on write. */
      near_duplicate: Count,
      /** Semantic duplicates found on write. */
      semantic_duplicate: Count,
      /** Writes whose content an existing memory already covered. */
      covered_by_existing: Count,
    }),
  }),
  chunks: z.object({
    total: Count,
    /** Chunks of active memories (the ones search reads). */
    active: Count,
    /** Mean chunks per memory that has any, 2 decimals; 0 without chunks. */
    per_memory_avg: z.number().min(0),
    per_memory_max: Count,
    /** Chunks whose memory is gone or in another workspace; 0 unless something is broken. */
    orphaned: Count,
  }),
  generated_at: z.string(),
});
export type PruningMetrics = z.infer<typeof PruningMetrics>;

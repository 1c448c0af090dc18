import { z } from 'zod';

/** Memories each pass of a hygiene run examines at most, and the default. */
export const HYGIENE_LIMIT = { min: 1, max: 10_000, default: 1000 } as const;

/** `true`/`1` or `false`/`0` (default `false`), as a query parameter. */
const QueryBoolean = z
  .enum(['true', 'false', '1', '0'])
  .default('false')
  .transform((value) => value === 'true' || value === '1');

export const MemoryHygieneQuery = z
  .object({
    /** Only report what a run would change. */
    dry_run: QueryBoolean,
    limit: z.coerce
      .number({ invalid_type_error: 'must be an integer' })
      .int()
      .min(HYGIENE_LIMIT.min)
      .max(HYGIENE_LIMIT.max)
      .default(HYGIENE_LIMIT.default),
    /** One workspace only; every workspace when omitted. */
    workspace_id: z.string().uuid().optional(),
  })
  // An operator's misspelt parameter must not widen a run to every workspace.
  .strict();
export type MemoryHygieneQuery = z.infer<typeof MemoryHygieneQuery>;

/** What a hygiene run found, and changed unless `dry_run`. */
export const MemoryHygieneReport = z.object({
  dry_run: z.boolean(),
  /** Live memories whose `expires_at` has passed: archived. */
  expired: z.object({
    count: z.number().int().min(0),
    memory_ids: z.array(z.string()),
  }),
  /** Near duplicates within one space: each superseded by the oldest it matches. */
  duplicates: z.object({
    count: z.number().int().min(0),
    superseded: z.array(
      z.object({
        memory_id: z.string(),
        kept_memory_id: z.string(),
        similarity: z.number().min(0).max(1),
      }),
    ),
  }),
  /** Live memories compared for duplicates. */
  scanned: z.number().int().min(0),
});
export type MemoryHygieneReport = z.infer<typeof MemoryHygieneReport>;

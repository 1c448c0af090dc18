import { z } from 'zod';

/** The plans a workspace can hold (the checkout set of the spec's Plans table). */
export const PLAN_CODES = ['launch', 'build', 'deploy', 'scale'] as const;
export const PlanCode = z.enum(PLAN_CODES);
export type PlanCode = z.infer<typeof PlanCode>;

/** Plan codes a response may show: the plans plus `scale_plus`, a display code only. */
export const DISPLAY_PLAN_CODES = [...PLAN_CODES, 'scale_plus'] as const;
export const DisplayPlanCode = z.enum(DISPLAY_PLAN_CODES);
export type DisplayPlanCode = z.infer<typeof DisplayPlanCode>;

/** One row of the spec's Plans table, as the spec gives it. */
export interface Plan {
  code: PlanCode;
  priceInr: number;
  /** Length of a billing period; period caps reset when it ends. */
  periodDays: number;
  /** Memory writes per UTC day (the spec's "Writes"). */
  writesPerDay: number;
  /** Searches and context calls per UTC day (the spec's "Reads"). */
  readsPerDay: number;
  /** Embedding tokens per period. */
  embedTokensPerPeriod: number;
  /** Generation (LLM) tokens per period: extraction and other model calls. */
  genTokensPerPeriod: number;
  /** Stored memory text, in GB (10^9 bytes). A level, not a rate: it never resets. */
  storageGb: number;
  /** Memories older than this are archived by the retention job. */
  retentionDays: number;
  /** Requests per minute per workspace. */
  workspaceRpm: number;
}

/**
 * The spec's Plans table: the one place its numbers live.
 *
 * The table gives one number each for writes and reads; they are DAILY limits, because the usage
 * response reports `writes` and `reads` "consumed today" against `limits` (effective limits).
 * Tokens and storage are PERIOD caps (storage: a cap on what is stored). The other metered
 * resources are derived in {@link planCaps}.
 */
export const PLANS: Readonly<Record<PlanCode, Plan>> = {
  launch: {
    code: 'launch',
    priceInr: 399,
    periodDays: 7,
    writesPerDay: 250,
    readsPerDay: 1_000,
    embedTokensPerPeriod: 100_000,
    genTokensPerPeriod: 150_000,
    storageGb: 0.5,
    retentionDays: 30,
    workspaceRpm: 120,
  },
  build: {
    code: 'build',
    priceInr: 999,
    periodDays: 30,
    writesPerDay: 1_200,
    readsPerDay: 4_000,
    embedTokensPerPeriod: 600_000,
    genTokensPerPeriod: 1_000_000,
    storageGb: 2,
    retentionDays: 90,
    workspaceRpm: 120,
  },
  deploy: {
    code: 'deploy',
    priceInr: 2_999,
    periodDays: 30,
    writesPerDay: 5_000,
    readsPerDay: 15_000,
    embedTokensPerPeriod: 3_000_000,
    genTokensPerPeriod: 5_000_000,
    storageGb: 10,
    retentionDays: 180,
    workspaceRpm: 120,
  },
  scale: {
    code: 'scale',
    priceInr: 8_999,
    periodDays: 30,
    writesPerDay: 20_000,
    readsPerDay: 60_000,
    embedTokensPerPeriod: 12_000_000,
    genTokensPerPeriod: 20_000_000,
    storageGb: 50,
    retentionDays: 365,
    workspaceRpm: 300,
  },
};

/** What a workspace is metered on (the resources of a UsageCapAlert). */
export const USAGE_RESOURCES = [
  'writes',
  'reads',
  'embeds',
  'embed_tokens',
  'extraction_calls',
  'gen_tokens',
  'storage',
] as const;
export const UsageResource = z.enum(USAGE_RESOURCES);
export type UsageResource = z.infer<typeof UsageResource>;

/**
 * Which window each resource's cap counts in: a UTC `day`, the entitlement's billing `period`,
 * or `total` (storage: what is stored now; it goes down when memories are deleted).
 */
export type UsageWindow = 'day' | 'period' | 'total';

export const USAGE_WINDOWS: Readonly<Record<UsageResource, UsageWindow>> = {
  writes: 'day',
  reads: 'day',
  embeds: 'day',
  extraction_calls: 'day',
  embed_tokens: 'period',
  gen_tokens: 'period',
  storage: 'total',
};

const BYTES_PER_GB = 1_000_000_000;

/**
 * Every cap of a plan, by resource, in the unit it is metered in (storage in bytes).
 *
 * - `embeds` per day = writes + reads per day: every write embeds its text and every search its
 *   query, so a workspace using its whole daily allowance of single-chunk writes and searches
 *   meets the embeds limit exactly when it meets the other two. Long texts (several chunks) and
 *   extracted child memories draw on the same allowance faster; what embedding really costs is
 *   bounded by the embed-token cap of the period. Deriving it from tokens instead (tokens per
 *   period / days / tokens per embed) would make it smaller than writes + reads on every plan,
 *   so writes would be refused for embeds the plan's writes allow.
 * - `extraction_calls` per day = writes per day: the write pipeline makes at most one extraction
 *   call per write; what extraction costs is bounded by the generation-token cap of the period.
 */
export function planCaps(plan: Plan): Record<UsageResource, number> {
  return {
    writes: plan.writesPerDay,
    reads: plan.readsPerDay,
    embeds: plan.writesPerDay + plan.readsPerDay,
    extraction_calls: plan.writesPerDay,
    embed_tokens: plan.embedTokensPerPeriod,
    gen_tokens: plan.genTokensPerPeriod,
    storage: Math.round(plan.storageGb * BYTES_PER_GB),
  };
}

/** Cap alerts start at these ratios of used to cap. */
export const CAP_ALERT_RATIOS = { warning: 0.8, critical: 0.95 } as const;

/** A cap close to or at its limit. */
export const UsageCapAlert = z.object({
  resource: UsageResource,
  severity: z.enum(['warning', 'critical']),
  used: z.number(),
  cap: z.number(),
  /** used / cap; 1 or more when the cap is reached. */
  ratio: z.number(),
});
export type UsageCapAlert = z.infer<typeof UsageCapAlert>;

/** Daily limits of writes, reads and embeds. */
export const UsageLimits = z.object({
  writes: z.number().int(),
  reads: z.number().int(),
  embeds: z.number().int(),
});
export type UsageLimits = z.infer<typeof UsageLimits>;

export const ENTITLEMENT_SOURCES = ['billing', 'internal_grant'] as const;
export const EntitlementSource = z.enum(ENTITLEMENT_SOURCES);
export type EntitlementSource = z.infer<typeof EntitlementSource>;

/**
 * - `normal`: the entitlement was verified; the plan's limits apply (or limits are off).
 * - `degraded`: the entitlement cannot be verified right now; quota-consuming writes answer
 *   503 `ENTITLEMENT_DEGRADED`, reads keep working, and it ends by itself when checks recover.
 * - `sleep`: the workspace has no active entitlement (a billing plan ended and its grace is
 *   over, or the grant was revoked); metered routes answer 402 `TRIAL_EXPIRED` until a plan is
 *   active again. Stored memories are kept.
 */
export const OPERATIONAL_MODES = ['normal', 'degraded', 'sleep'] as const;
export const OperationalMode = z.enum(OPERATIONAL_MODES);
export type OperationalMode = z.infer<typeof OperationalMode>;

/** `GET /v1/usage/today`: the spec's "Usage response". */
export const UsageResponse = z.object({
  /** Plan code (in billing grace: the paid tier, while the limits are floored). */
  plan: DisplayPlanCode,
  /** Consumed today (committed; reservations in flight are not counted). */
  writes: z.number().int(),
  reads: z.number().int(),
  embeds: z.number().int(),
  /** The UTC day counted, `YYYY-MM-DD`. */
  day: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
  workspace_id: z.string().uuid().optional(),
  entitlement_active: z.boolean().optional(),
  entitlement_source: EntitlementSource.optional(),
  /** Effective daily limits; absent when limits are off (`MNEMO_LIMITS=off`). */
  limits: UsageLimits.optional(),
  /** @deprecated legacy alias of `limits`. */
  caps: UsageLimits.optional(),
  cap_alerts: z.array(UsageCapAlert).optional(),
  operational_mode: OperationalMode.optional(),
  /** Billing grace: daily limits floored toward the launch plan while `plan` shows the paid tier. */
  grace_soft_downgrade: z.boolean().optional(),
});
export type UsageResponse = z.infer<typeof UsageResponse>;

/** The longest history `GET /v1/usage/history` returns, in days. */
export const USAGE_HISTORY_MAX_DAYS = 90;

export const UsageHistoryQuery = z
  .object({
    days: z.coerce
      .number({ invalid_type_error: 'must be an integer' })
      .int()
      .min(1)
      .max(USAGE_HISTORY_MAX_DAYS)
      .optional()
      .describe('How many UTC days, today included (default 30).'),
  })
  .strict();
export type UsageHistoryQuery = z.infer<typeof UsageHistoryQuery>;

/** One UTC day of a workspace's consumption. */
export const UsageHistoryDay = z.object({
  /** `YYYY-MM-DD` (UTC). */
  day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  /** HTTP requests the audit log recorded for the workspace, whatever their outcome. */
  requests: z.number().int().min(0),
  /** Of those, the ones refused with 429 (a rate limit or a cap). */
  rate_limited: z.number().int().min(0),
  /** Metered consumption (the daily counters of `GET /v1/usage/today`). */
  writes: z.number().int().min(0),
  reads: z.number().int().min(0),
  embeds: z.number().int().min(0),
});
export type UsageHistoryDay = z.infer<typeof UsageHistoryDay>;

/** `GET /v1/usage/history`: every day of the window, oldest first, days without use as zeros. */
export const UsageHistoryResponse = z.object({
  days: z.array(UsageHistoryDay),
});
export type UsageHistoryResponse = z.infer<typeof UsageHistoryResponse>;

/** How many owners `GET /v1/usage/memories` lists, largest first. */
export const MEMORY_BREAKDOWN_MAX_OWNERS = 100;

/** `GET /v1/usage/memories`: what the workspace stores, by lifecycle state and by owner. */
export const MemoryBreakdownResponse = z.object({
  total: z.number().int().min(0),
  by_state: z.object({
    active: z.number().int().min(0),
    replaced: z.number().int().min(0),
    archived: z.number().int().min(0),
  }),
  /** Owners holding the most memories (at most 100), with their counts. */
  by_owner: z.array(
    z.object({
      owner_id: z.string(),
      owner_type: z.string(),
      total: z.number().int().min(0),
      active: z.number().int().min(0),
    }),
  ),
  /** Every owner with at least one memory (`by_owner` may list fewer). */
  owners: z.number().int().min(0),
});
export type MemoryBreakdownResponse = z.infer<typeof MemoryBreakdownResponse>;

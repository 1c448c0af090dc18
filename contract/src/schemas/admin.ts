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
  /** The run stopped at its time budget (`MNEMO_JOB_BUDGET_MS`); the next run carries on. */
  budget_exhausted: z.boolean(),
});
export type MemoryHygieneReport = z.infer<typeof MemoryHygieneReport>;

/** `POST /admin/webhooks/reprocess`: deferred callbacks to rerun at most (oldest first). */
export const WebhookReprocessQuery = z
  .object({
    limit: z.coerce
      .number({ invalid_type_error: 'must be an integer' })
      .int()
      .min(1)
      .max(1000)
      .default(100),
  })
  .strict();
export type WebhookReprocessQuery = z.infer<typeof WebhookReprocessQuery>;

/** What a reprocessing run did to the deferred callbacks it picked up. */
export const WebhookReprocessReport = z.object({
  attempted: z.number().int().min(0),
  processed: z.number().int().min(0),
  /** Still deferred: the provider could not be asked again. */
  deferred: z.number().int().min(0),
  rejected: z.number().int().min(0),
});
export type WebhookReprocessReport = z.infer<typeof WebhookReprocessReport>;

/** `GET /v1/admin/billing/health`. */
export const BillingHealth = z.object({
  /** The configured payment provider; `none`: billing is off (internal grants). */
  provider: z.string(),
  enabled: z.boolean(),
  /** Callbacks waiting for the provider's verification. */
  deferred_events: z.number().int().min(0),
  oldest_deferred_at: z.string().datetime({ offset: true }).nullable(),
  /** When the provider last confirmed a transaction (verification API answered). */
  last_successful_verification_at: z.string().datetime({ offset: true }).nullable(),
  /** A cheap request to the verification API with a short timeout; null when billing is off. */
  provider_reachable: z.boolean().nullable(),
  probe_ms: z.number().int().min(0).nullable(),
  probe_error: z.string().nullable(),
});
export type BillingHealth = z.infer<typeof BillingHealth>;

/** `POST /admin/billing/cancel-at-period-end`. */
export const CancelAtPeriodEndRequest = z
  .object({
    workspace_id: z.string().uuid(),
    /** true: the plan ends at its period end without grace; false: undo. */
    cancel_at_period_end: z.boolean(),
  })
  .strict();
export type CancelAtPeriodEndRequest = z.infer<typeof CancelAtPeriodEndRequest>;

/** `POST /admin/memory-retention`: memories archived at most per run, and the default. */
export const RETENTION_LIMIT = HYGIENE_LIMIT;

export const MemoryRetentionQuery = z
  .object({
    /** Only report what a run would archive. */
    dry_run: QueryBoolean,
    limit: z.coerce
      .number({ invalid_type_error: 'must be an integer' })
      .int()
      .min(RETENTION_LIMIT.min)
      .max(RETENTION_LIMIT.max)
      .default(RETENTION_LIMIT.default),
    /** One workspace only; every workspace when omitted. */
    workspace_id: z.string().uuid().optional(),
  })
  .strict();
export type MemoryRetentionQuery = z.infer<typeof MemoryRetentionQuery>;

/** One workspace of a retention run: its plan's retention and what the run did there. */
export const MemoryRetentionWorkspace = z.object({
  workspace_id: z.string(),
  /** The effective plan whose `retention_days` applied. */
  plan: z.string(),
  retention_days: z.number().int().min(0),
  /** Live memories created before this instant are past retention. */
  cutoff: z.string().datetime({ offset: true }),
  /** Live memories past retention this run picked up. */
  examined: z.number().int().min(0),
  /** Of those, archived now (0 on a dry run). */
  archived: z.number().int().min(0),
});
export type MemoryRetentionWorkspace = z.infer<typeof MemoryRetentionWorkspace>;

/** What a retention run found, and archived unless `dry_run`. */
export const MemoryRetentionReport = z.object({
  dry_run: z.boolean(),
  /** false: `MNEMO_LIMITS=off`, no plan is in force and nothing is archived. */
  enforced: z.boolean(),
  limit: z.number().int().min(1),
  examined: z.number().int().min(0),
  archived: z.number().int().min(0),
  /** The run stopped at `limit`: more memories may be past retention; run it again. */
  has_more: z.boolean(),
  /** Workspaces with live memories past their plan's retention. */
  workspaces: z.array(MemoryRetentionWorkspace),
  /** Workspaces left alone because their plan could not be verified (ENTITLEMENT_DEGRADED). */
  skipped: z.array(z.object({ workspace_id: z.string(), reason: z.string() })),
});
export type MemoryRetentionReport = z.infer<typeof MemoryRetentionReport>;

/** `POST /admin/usage/reconcile`: what reconciliation did to metering reservations. */
export const UsageReconcileReport = z.object({
  /** Reservations past their expiry (a crashed or hung request): expired and refunded now. */
  expired: z.number().int().min(0),
  /** Expired reservations old enough to be deleted: deleted now. */
  purged: z.number().int().min(0),
});
export type UsageReconcileReport = z.infer<typeof UsageReconcileReport>;

/** One scheduled job in `GET /v1/admin/jobs`: its schedule and its last run, on any instance. */
export const ScheduledJobStatus = z.object({
  name: z.string(),
  /** Period in ms (runs at each multiple since the epoch, once across instances); 0: off. */
  interval_ms: z.number().int().min(0),
  /** Runs once when instances start (re-embedding), not by period. */
  at_start: z.boolean(),
  /** `never_run`: no run recorded yet. */
  status: z.enum(['never_run', 'running', 'succeeded', 'failed']),
  last_started_at: z.string().datetime({ offset: true }).nullable(),
  last_finished_at: z.string().datetime({ offset: true }).nullable(),
  last_duration_ms: z.number().int().min(0).nullable(),
  /** The last failure's SQLSTATE or error class (never its message); null after a success. */
  last_error: z.string().nullable(),
  /** Attempt of its period the last run was (retries count up from 1). */
  attempt: z.number().int().min(1).nullable(),
  runs: z.number().int().min(0),
  failures: z.number().int().min(0),
  /** When the next period starts; null when off or run only at start. */
  next_run_at: z.string().datetime({ offset: true }).nullable(),
});
export type ScheduledJobStatus = z.infer<typeof ScheduledJobStatus>;

/** `GET /v1/admin/jobs`. */
export const ScheduledJobsReport = z.object({
  /** `pg-boss` (PostgreSQL: each run once across instances) or `in-process` (embedded PGlite). */
  runner: z.enum(['pg-boss', 'in-process']),
  jobs: z.array(ScheduledJobStatus),
});
export type ScheduledJobsReport = z.infer<typeof ScheduledJobsReport>;

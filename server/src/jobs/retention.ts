import { PLANS, type MemoryRetentionReport } from '@mnemo/contract';
import type { Database } from '../db/client.js';
import {
  archivePastRetention,
  type RetentionPolicy,
  workspacesWithMemoriesBefore,
} from '../db/queries/retention.js';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { PlanService } from '../services/plans.js';
import { everyInterval, type ScheduledJob } from './interval.js';

const DAY_MS = 86_400_000;

/** Batches one scheduled run goes through at most. */
export const MAX_SCHEDULED_BATCHES = 100;

/** `skipped` reason: a self-hosted workspace on the default plan, which has no retention. */
export const RETENTION_NOT_CHOSEN = 'self_hosted_default_keeps_memories';

/** No plan keeps memories for less: workspaces with nothing older need no plan lookup. */
const SHORTEST_RETENTION_DAYS = Math.min(...Object.values(PLANS).map((p) => p.retentionDays));

export interface RetentionOptions {
  dryRun: boolean;
  /** Most memories one run archives (examines). */
  limit: number;
  workspaceId?: string;
  /** `MNEMO_LIMITS`: off means no plan is in force, and retention archives nothing. */
  limitsEnabled: boolean;
  now?: Date;
}

export interface RetentionDeps {
  db: Database;
  plans: PlanService;
  logger?: Logger;
}

/**
 * Plan retention: archives live memories created longer ago than the retention of their
 * workspace's effective plan (the plan the caps come from, resolved by {@link PlanService}).
 * Age is `created_at`, when the service stored the memory, not `effective_at`, which the client
 * chooses. Memories are archived (lifecycle_state `archived`, a lifecycle event with rule
 * `retention`, the plan and its days), never deleted; oldest first, at most `limit` per run, so a
 * large backlog drains over several runs (`has_more`). A workspace whose entitlement cannot be
 * verified is skipped: nothing is archived on a plan that might be the wrong one. With limits off
 * nothing is archived (a private install keeps everything), nor on an internal grant whose plan
 * the operator did not choose (the self-hosted default, {@link PlanService.internalGrantRetention}).
 */
export async function runRetention(
  deps: RetentionDeps,
  options: RetentionOptions,
): Promise<MemoryRetentionReport> {
  const now = options.now ?? new Date();
  const report: MemoryRetentionReport = {
    dry_run: options.dryRun,
    enforced: options.limitsEnabled,
    limit: options.limit,
    examined: 0,
    archived: 0,
    has_more: false,
    workspaces: [],
    skipped: [],
  };
  if (!options.limitsEnabled) return report;

  const candidates = await workspacesWithMemoriesBefore(deps.db, {
    before: new Date(now.getTime() - SHORTEST_RETENTION_DAYS * DAY_MS),
    ...(options.workspaceId ? { workspaceId: options.workspaceId } : {}),
  });
  const policies: RetentionPolicy[] = [];
  for (const workspaceId of candidates) {
    try {
      const { plan, displayPlan, source } = await deps.plans.resolve(workspaceId, now);
      if (source === 'internal_grant' && !deps.plans.internalGrantRetention) {
        report.skipped.push({ workspace_id: workspaceId, reason: RETENTION_NOT_CHOSEN });
        continue;
      }
      policies.push({
        workspaceId,
        cutoff: new Date(now.getTime() - plan.retentionDays * DAY_MS),
        plan: displayPlan,
        retentionDays: plan.retentionDays,
      });
    } catch (error) {
      if (!(error instanceof ServiceError) || error.code !== 'ENTITLEMENT_DEGRADED') throw error;
      report.skipped.push({ workspace_id: workspaceId, reason: 'entitlement_unverifiable' });
    }
  }

  const counts = await archivePastRetention(deps.db, {
    policies,
    limit: options.limit,
    now,
    dryRun: options.dryRun,
  });
  const byWorkspace = new Map(counts.map((row) => [row.workspace_id, row]));
  for (const policy of policies) {
    const row = byWorkspace.get(policy.workspaceId);
    if (!row) continue;
    report.workspaces.push({
      workspace_id: policy.workspaceId,
      plan: policy.plan,
      retention_days: policy.retentionDays,
      cutoff: policy.cutoff.toISOString(),
      examined: row.examined,
      archived: row.archived,
    });
    report.examined += row.examined;
    report.archived += row.archived;
  }
  report.has_more = report.examined >= options.limit;
  if (report.archived > 0) {
    deps.logger?.info(
      {
        archived: report.archived,
        workspaces: report.workspaces.length,
        has_more: report.has_more,
      },
      'memory retention archived memories',
    );
  }
  return report;
}

/**
 * Runs {@link runRetention} over every workspace every `intervalMs` (0, or limits off: never),
 * in batches of `limit` until nothing past retention is left (at most
 * {@link MAX_SCHEDULED_BATCHES} batches; the rest waits for the next run).
 */
export function scheduleRetention(
  deps: RetentionDeps & { logger: Logger },
  {
    intervalMs,
    limit,
    limitsEnabled,
  }: { intervalMs: number; limit: number; limitsEnabled: boolean },
): ScheduledJob {
  return everyInterval(
    'memory retention',
    limitsEnabled ? intervalMs : 0,
    deps.logger,
    async () => {
      // Batch after batch until the backlog is drained (bounded: a run never goes on for ever).
      for (let batch = 0; batch < MAX_SCHEDULED_BATCHES; batch += 1) {
        const report = await runRetention(deps, { dryRun: false, limit, limitsEnabled });
        if (!report.has_more || report.archived === 0) break;
      }
    },
  );
}

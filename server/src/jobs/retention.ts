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
import { JobPace } from './pacing.js';

const DAY_MS = 86_400_000;

/** Batches one scheduled run goes through at most. */
export const MAX_SCHEDULED_BATCHES = 100;

/** Memories one retention statement archives at most: a short transaction, a short lock. */
export const RETENTION_BATCH = 500;

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
  /** Wall-clock budget of the run (0: unbounded): past it no new batch starts (`has_more`). */
  budgetMs?: number;
  /** Memories per statement ({@link RETENTION_BATCH}). */
  batchSize?: number;
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

  // Batch by batch, each its own short statement, giving the event loop back in between.
  const pace = new JobPace(options.budgetMs ?? 0);
  // A dry run archives nothing, so later batches would see the same rows: one statement.
  const batchSize = options.dryRun ? options.limit : (options.batchSize ?? RETENTION_BATCH);
  const totals = new Map<string, { examined: number; archived: number }>();
  let stoppedEarly = false;
  while (report.examined < options.limit) {
    if (pace.spent) {
      stoppedEarly = true;
      break;
    }
    const want = Math.min(batchSize, options.limit - report.examined);
    const counts = await archivePastRetention(deps.db, {
      policies,
      limit: want,
      now,
      dryRun: options.dryRun,
    });
    let examined = 0;
    for (const row of counts) {
      const total = totals.get(row.workspace_id) ?? { examined: 0, archived: 0 };
      total.examined += row.examined;
      total.archived += row.archived;
      totals.set(row.workspace_id, total);
      examined += row.examined;
      report.examined += row.examined;
      report.archived += row.archived;
    }
    if (examined < want || options.dryRun) break;
    await pace.yield();
  }
  for (const policy of policies) {
    const row = totals.get(policy.workspaceId);
    if (!row) continue;
    report.workspaces.push({
      workspace_id: policy.workspaceId,
      plan: policy.plan,
      retention_days: policy.retentionDays,
      cutoff: policy.cutoff.toISOString(),
      examined: row.examined,
      archived: row.archived,
    });
  }
  report.has_more = stoppedEarly || report.examined >= options.limit;
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

import { randomUUID } from 'node:crypto';
import {
  CAP_ALERT_RATIOS,
  MEMORY_BREAKDOWN_MAX_OWNERS,
  type MemoryBreakdownResponse,
  USAGE_RESOURCES,
  type UsageHistoryResponse,
  type UsageCapAlert,
  type UsageResource,
  type UsageResponse,
} from '@mnemo/contract';
import type { Database, Reader } from '../../db/client.js';
import { getEntitlement } from '../../db/queries/entitlements.js';
import {
  type CounterRow,
  decreaseUsed,
  expireReservations,
  purgeExpiredReservations,
  readMemoryBreakdown,
  readUsageCounters,
  readUsageHistory,
  reserveUsage,
  settleReservation,
} from '../../db/queries/usage.js';
import { InvariantError, ServiceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import {
  type EffectivePlan,
  effectivePlan,
  type PlanService,
  TOTAL_WINDOW_START,
  utcDay,
} from '../plans.js';
import {
  BlockMeter,
  type BlockMeteringOptions,
  type MeteredItem,
  type UnsettledUsage,
  type UsageLedger,
} from './blocks.js';
import {
  nothingToSettle,
  type QuotaGate,
  type UsageAmounts,
  type UsageRequest,
  type UsageReservation,
} from '../quota.js';

/** The field of a {@link UsageAmounts} each metered resource is requested with. */
const REQUEST_FIELDS: Record<UsageResource, keyof UsageAmounts> = {
  writes: 'writes',
  reads: 'reads',
  embeds: 'embeds',
  embed_tokens: 'embedTokens',
  extraction_calls: 'extractionCalls',
  gen_tokens: 'genTokens',
  storage: 'storageBytes',
};

function amountOf(amounts: UsageAmounts, resource: UsageResource): number {
  const value = amounts[REQUEST_FIELDS[resource]] ?? 0;
  if (!Number.isFinite(value) || value < 0) {
    throw new InvariantError(
      `usage amount of ${resource} must be a finite number >= 0, got ${value}`,
    );
  }
  return Math.ceil(value);
}

/**
 * The reservation's items: each resource the request consumes (a positive whole amount), in the
 * window and under the cap the plan puts it. A loop, not map and filter: this runs on every
 * metered request.
 */
function meteredItems(amounts: UsageAmounts, plan: EffectivePlan): MeteredItem[] {
  const items: MeteredItem[] = [];
  for (const resource of USAGE_RESOURCES) {
    const amount = amountOf(amounts, resource);
    if (amount <= 0) continue;
    const window = plan.windows[resource];
    items.push({
      resource,
      windowKind: window.kind,
      windowStart: window.start,
      amount,
      cap: plan.caps[resource],
      resetsAt: window.resetsAt,
    });
  }
  return items;
}

/** Whether the request consumes anything. */
const consumesAny = (amounts: UsageAmounts) =>
  USAGE_RESOURCES.some((resource) => amountOf(amounts, resource) > 0);

/** Writes, extraction and storage change the workspace; reads and embeddings of queries do not. */
const isMutation = (request: UsageAmounts) =>
  (request.writes ?? 0) > 0 ||
  (request.extractionCalls ?? 0) > 0 ||
  (request.storageBytes ?? 0) > 0;

/** Reservations not settled within this long are expired and refunded by reconciliation. */
export const DEFAULT_RESERVATION_TTL_MS = 300_000;

export interface MeteredQuotaOptions {
  db: Database;
  plans: PlanService;
  /** Default {@link DEFAULT_RESERVATION_TTL_MS}. */
  reservationTtlMs?: number;
  /** Block metering (services/usage/blocks.ts); default: every request reserved exactly. */
  blocks?: BlockMeteringOptions;
  now?: () => Date;
  logger?: Logger;
}

/** The metered gate, plus what block metering holds in memory. */
export interface MeteredQuota extends QuotaGate {
  /** This process's consumption of the workspace not yet in its counters. */
  unsettled(workspaceId: string): UnsettledUsage[];
  /** Settles every block (shutdown, tests). */
  drain(): Promise<void>;
}

function noPlanInForce(plan: EffectivePlan): ServiceError {
  // A subscription its owner canceled leaves the control plane (usage, billing, keys) working:
  // the data plane is closed until a plan is bought again. A plan that merely ran out is a
  // lapsed trial or period.
  if (plan.status === 'canceled') {
    return new ServiceError(
      'CONTROL_PLANE_ONLY',
      `The workspace's ${plan.displayPlan} subscription was canceled: only control-plane routes (usage, billing, keys) work until a plan is bought`,
    );
  }
  return new ServiceError(
    'TRIAL_EXPIRED',
    plan.source === 'billing'
      ? `The workspace has no plan in force (its ${plan.displayPlan} plan has ended); renew it to continue`
      : 'The workspace has no plan in force: its internal grant was revoked',
  );
}

/**
 * The quota gate of `MNEMO_LIMITS=on`: each reservation checks the workspace's daily and period
 * caps and holds the amounts atomically (one statement, see db/queries/usage.ts), then is
 * committed or released by the caller, or expired by {@link reconcileUsage} if its process died.
 * With `blocks`, runs of similar requests share one such reservation (services/usage/blocks.ts).
 *
 * When the entitlement cannot be verified, writes are refused (`ENTITLEMENT_DEGRADED`) and
 * read-only requests run unmetered: the spec's temporary read-only degradation.
 */
export function createMeteredQuota({
  db,
  plans,
  reservationTtlMs = DEFAULT_RESERVATION_TTL_MS,
  blocks = { requestsPerBlock: 1, maxAgeMs: 0 },
  now = () => new Date(),
  logger,
}: MeteredQuotaOptions): MeteredQuota {
  const meter = new BlockMeter(databaseLedger(db, { reservationTtlMs, now }), blocks, logger);
  return {
    async reserve(request: UsageRequest): Promise<UsageReservation> {
      if (!consumesAny(request)) return nothingToSettle;
      const at = now();
      let plan: EffectivePlan;
      try {
        plan =
          plans.cached(request.workspaceId, at) ?? (await plans.resolve(request.workspaceId, at));
      } catch (error) {
        if (
          error instanceof ServiceError &&
          error.code === 'ENTITLEMENT_DEGRADED' &&
          !isMutation(request)
        ) {
          logger?.warn(
            { workspace_id: request.workspaceId },
            'entitlement unverifiable: read served unmetered',
          );
          return nothingToSettle;
        }
        throw error;
      }
      if (plan.state === 'lapsed') throw noPlanInForce(plan);
      // Writes are settled before they are acknowledged, so an instance killed mid-run leaves
      // none of its acknowledged writes uncounted; reads keep the cheaper block metering.
      const holding = await meter.reserve(
        request.workspaceId,
        meteredItems(request, plan),
        plan.displayPlan,
        { exact: isMutation(request) },
      );
      return {
        commit: (actual) => holding.commit(actual ? actualAmounts(actual) : undefined),
        release: () => holding.release(),
      };
    },
    unsettled: (workspaceId) => meter.unsettled(workspaceId),
    drain: () => meter.drain(),
  };
}

/** Reservations and settlements in the workspace's usage counters (db/queries/usage.ts). */
export function databaseLedger(
  db: Database,
  { reservationTtlMs, now }: { reservationTtlMs: number; now: () => Date },
): UsageLedger {
  return {
    async reserve(workspaceId, items, plan) {
      const id = randomUUID();
      const at = now();
      const counters = await reserveUsage(db, {
        reservationId: id,
        workspaceId,
        items,
        expiresAt: new Date(at.getTime() + reservationTtlMs),
        now: at,
        plan,
      });
      return { id, counters };
    },
    async settle(id, outcome, actual) {
      await settleReservation(db, {
        reservationId: id,
        outcome,
        ...(actual ? { actual } : {}),
        now: now(),
      });
    },
  };
}

/** The resources `actual` names, by resource: commit replaces only those. */
function actualAmounts(actual: UsageAmounts): Partial<Record<UsageResource, number>> {
  const out: Partial<Record<UsageResource, number>> = {};
  for (const resource of USAGE_RESOURCES) {
    if (actual[REQUEST_FIELDS[resource]] !== undefined) out[resource] = amountOf(actual, resource);
  }
  return out;
}

export interface ReconcileOptions {
  /** Reservations expired per statement. Default 1000. */
  batchSize?: number;
  /**
   * Expired reservations are deleted this long after expiring (until then a request that
   * finishes late still has its consumption counted). Default one day.
   */
  keepExpiredMs?: number;
  /**
   * Paces a periodic run (`jobs/pacing.ts`): asked between statements whether the run's budget
   * is spent (what is left waits for the next run) and given the chance to yield.
   */
  pace?: { readonly spent: boolean; yield(): Promise<void> };
}

export interface ReconcileReport {
  /** Reservations past their expiry, now expired and refunded. */
  expired: number;
  /** Expired reservations deleted. */
  purged: number;
}

/**
 * Refunds reservations left open past their expiry (a crashed or hung request) and deletes
 * expired ones once they are old: for `POST /admin/usage/reconcile` and the scheduler. Safe to
 * run from several instances at once.
 */
export async function reconcileUsage(
  db: Database,
  now: Date = new Date(),
  { batchSize = 1000, keepExpiredMs = 86_400_000, pace }: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const report: ReconcileReport = { expired: 0, purged: 0 };
  while (!pace?.spent) {
    const expired = await expireReservations(db, { now, limit: batchSize });
    report.expired += expired;
    if (expired < batchSize) break;
    await pace?.yield();
  }
  const before = new Date(now.getTime() - keepExpiredMs);
  while (!pace?.spent) {
    const purged = await purgeExpiredReservations(db, { before, limit: batchSize });
    report.purged += purged;
    if (purged < batchSize) break;
    await pace?.yield();
  }
  return report;
}

/** Takes deleted memories' bytes off the workspace's stored total (the storage cap). */
export async function recordStorageFreed(
  db: Database,
  workspaceId: string,
  bytes: number,
  now: Date = new Date(),
): Promise<void> {
  if (bytes <= 0) return;
  await decreaseUsed(db, {
    workspaceId,
    windowKind: 'total',
    windowStart: TOTAL_WINDOW_START,
    resource: 'storage',
    amount: Math.ceil(bytes),
    now,
  });
}

export interface UsageDeps {
  db: Database;
  plans: PlanService;
  /** `MNEMO_LIMITS`: off reports consumption without limits or alerts. */
  limitsEnabled: boolean;
  /** Consumption this process's usage blocks hold but have not written to the counters yet. */
  unsettled?: (workspaceId: string) => UnsettledUsage[];
}

const roundRatio = (ratio: number) => Math.round(ratio * 10_000) / 10_000;

/** Alerts for every resource at 80 % of its cap or more (critical from 95 %). */
export function capAlerts(
  used: Record<UsageResource, number>,
  caps: Record<UsageResource, number>,
): UsageCapAlert[] {
  const alerts: UsageCapAlert[] = [];
  for (const resource of USAGE_RESOURCES) {
    const cap = caps[resource];
    if (cap <= 0) continue;
    const ratio = used[resource] / cap;
    if (ratio < CAP_ALERT_RATIOS.warning) continue;
    alerts.push({
      resource,
      severity: ratio >= CAP_ALERT_RATIOS.critical ? 'critical' : 'warning',
      used: used[resource],
      cap,
      ratio: roundRatio(ratio),
    });
  }
  return alerts;
}

function usedBy(
  counters: CounterRow[],
  plan: Pick<EffectivePlan, 'windows'>,
  unsettled: UnsettledUsage[],
): Record<UsageResource, number> {
  const used = {} as Record<UsageResource, number>;
  for (const resource of USAGE_RESOURCES) {
    const window = plan.windows[resource];
    const inWindow = (c: { resource: string; windowKind: string; windowStart: string }) =>
      c.resource === resource && c.windowKind === window.kind && c.windowStart === window.start;
    const row = counters.find(inWindow);
    const pending = unsettled.filter(inWindow).reduce((sum, u) => sum + u.amount, 0);
    used[resource] = Number(row?.used ?? 0) + pending;
  }
  return used;
}

/**
 * `GET /v1/usage/today`: what the workspace consumed today (committed, including what this
 * process's usage blocks hold unsettled; reservations in flight are not counted), its effective daily limits, cap alerts over every metered resource (today's,
 * this period's and storage), and its operational mode:
 *
 * - `normal`: the entitlement was verified (or limits are off);
 * - `degraded`: it cannot be verified now; the plan shown is the last one read;
 * - `sleep`: no plan is in force (`TRIAL_EXPIRED` on metered routes).
 */
export async function usageToday(
  deps: UsageDeps,
  workspaceId: string,
  now: Date = new Date(),
): Promise<UsageResponse> {
  const day = utcDay(now).key;
  if (!deps.limitsEnabled) return unlimitedUsage(deps, workspaceId, now);

  let plan: EffectivePlan | undefined;
  let degraded = false;
  try {
    plan = await deps.plans.resolve(workspaceId, now);
  } catch (error) {
    if (!(error instanceof ServiceError) || error.code !== 'ENTITLEMENT_DEGRADED') throw error;
    degraded = true;
    plan = deps.plans.lastKnown(workspaceId, now);
  }
  if (!plan) {
    const counters = await readUsageCounters(deps.db, workspaceId, [{ kind: 'day', start: day }]);
    const today = (resource: UsageResource) =>
      Number(counters.find((c) => c.resource === resource)?.used ?? 0);
    return {
      plan: deps.plans.internalGrantPlan ?? 'launch',
      writes: today('writes'),
      reads: today('reads'),
      embeds: today('embeds'),
      day,
      workspace_id: workspaceId,
      entitlement_active: false,
      cap_alerts: [],
      operational_mode: 'degraded',
      grace_soft_downgrade: false,
    };
  }

  const counters = await readUsageCounters(
    deps.db,
    workspaceId,
    [plan.windows.writes, plan.windows.embed_tokens, plan.windows.storage].map((w) => ({
      kind: w.kind,
      start: w.start,
    })),
  );
  const used = usedBy(counters, plan, deps.unsettled?.(workspaceId) ?? []);
  const limits = { writes: plan.caps.writes, reads: plan.caps.reads, embeds: plan.caps.embeds };
  return {
    plan: plan.displayPlan,
    writes: used.writes,
    reads: used.reads,
    embeds: used.embeds,
    day: plan.day,
    workspace_id: workspaceId,
    entitlement_active: plan.state === 'active',
    entitlement_source: plan.source,
    limits,
    caps: limits,
    cap_alerts: capAlerts(used, plan.caps),
    operational_mode: degraded ? 'degraded' : plan.state === 'lapsed' ? 'sleep' : 'normal',
    grace_soft_downgrade: plan.state === 'grace',
  };
}

/** Limits off: nothing is metered or capped; the plan shown is the entitlement's if any. */
async function unlimitedUsage(
  deps: UsageDeps,
  workspaceId: string,
  now: Date,
): Promise<UsageResponse> {
  const day = utcDay(now).key;
  const [entitlement, counters] = await Promise.all([
    getEntitlement(deps.db, workspaceId),
    readUsageCounters(deps.db, workspaceId, [{ kind: 'day', start: day }]),
  ]);
  const today = (resource: UsageResource) =>
    Number(counters.find((c) => c.resource === resource)?.used ?? 0);
  return {
    plan: entitlement
      ? effectivePlan(workspaceId, entitlement, now).displayPlan
      : (deps.plans.internalGrantPlan ?? 'launch'),
    writes: today('writes'),
    reads: today('reads'),
    embeds: today('embeds'),
    day,
    workspace_id: workspaceId,
    entitlement_active: true,
    entitlement_source: entitlement?.entitlementSource ?? 'internal_grant',
    cap_alerts: [],
    operational_mode: 'normal',
    grace_soft_downgrade: false,
  };
}

const DAY_MS = 86_400_000;

/** Every UTC day of the last `days` (today included), oldest first, with zeros where unused. */
export async function usageHistory(
  db: Reader,
  workspaceId: string,
  days: number,
  now: Date = new Date(),
  /** What this process's usage blocks hold but have not written yet (as `usageToday` counts it). */
  unsettled: UnsettledUsage[] = [],
): Promise<UsageHistoryResponse> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const keys = Array.from({ length: days }, (_, i) =>
    new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
  const rows = new Map(
    (await readUsageHistory(db, workspaceId, keys[0]!)).map((row) => [row.day, row]),
  );
  return {
    days: keys.map((day) => {
      const row = rows.get(day);
      const pending = (resource: UsageResource) =>
        unsettled
          .filter((u) => u.resource === resource && u.windowKind === 'day' && u.windowStart === day)
          .reduce((sum, u) => sum + u.amount, 0);
      return {
        day,
        requests: row?.requests ?? 0,
        rate_limited: row?.rateLimited ?? 0,
        writes: (row?.writes ?? 0) + pending('writes'),
        reads: (row?.reads ?? 0) + pending('reads'),
        embeds: (row?.embeds ?? 0) + pending('embeds'),
      };
    }),
  };
}

/** What the workspace stores, by lifecycle state and by its largest owners. */
export async function memoryBreakdown(
  db: Reader,
  workspaceId: string,
): Promise<MemoryBreakdownResponse> {
  const { byState, owners, ownerCount } = await readMemoryBreakdown(
    db,
    workspaceId,
    MEMORY_BREAKDOWN_MAX_OWNERS,
  );
  const by_state = {
    active: byState.get('active') ?? 0,
    replaced: byState.get('replaced') ?? 0,
    archived: byState.get('archived') ?? 0,
  };
  return {
    total: [...byState.values()].reduce((sum, n) => sum + n, 0),
    by_state,
    by_owner: owners.map((owner) => ({
      owner_id: owner.ownerId,
      owner_type: owner.ownerType,
      total: owner.total,
      active: owner.active,
    })),
    owners: ownerCount,
  };
}

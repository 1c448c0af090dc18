import {
  DISPLAY_PLAN_CODES,
  type DisplayPlanCode,
  type EntitlementSource,
  PLANS,
  type Plan,
  type PlanCode,
  USAGE_RESOURCES,
  USAGE_WINDOWS,
  type UsageResource,
  type UsageWindow,
  planCaps,
} from '@mnemo/contract';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/client.js';
import {
  getEntitlement,
  grantInternalEntitlement,
  rollEntitlementPeriod,
} from '../db/queries/entitlements.js';
import { workspacesOfItsOwner } from '../db/queries/dashboard.js';
import type { WorkspaceEntitlement } from '../db/schema/index.js';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';

const DAY_MS = 86_400_000;

/** Counters of `total` windows (storage) all live under this fixed key. */
export const TOTAL_WINDOW_START = '1970-01-01';

/**
 * - `active`: the entitlement is in force.
 * - `grace`: it lapsed (payment failed, or the paid period ended) but `grace_until` has not
 *   passed: the plan still shows the paid tier, daily limits are floored to launch's.
 * - `lapsed`: nothing in force; metered requests are refused (`TRIAL_EXPIRED`).
 */
export type EntitlementState = 'active' | 'grace' | 'lapsed';

export interface UsageWindowSpan {
  kind: UsageWindow;
  /** `YYYY-MM-DD`: the counter key. */
  start: string;
  /** When the window resets; undefined for `total` (never). */
  resetsAt: Date | undefined;
}

/** A workspace's entitlement as it applies at one instant. */
export interface EffectivePlan {
  workspaceId: string;
  /** The plan whose period caps apply (launch when nothing is in force). */
  plan: Plan;
  /** What responses show: the entitlement's plan code (a paid tier in grace; `scale_plus`). */
  displayPlan: DisplayPlanCode;
  source: EntitlementSource;
  state: EntitlementState;
  /** The entitlement's status (`canceled`: the subscription was ended by its owner). */
  status: WorkspaceEntitlement['status'] | undefined;
  /** Caps in force, by resource: the plan's, with daily limits floored to launch's in grace. */
  caps: Record<UsageResource, number>;
  /** The window each resource counts in right now. */
  windows: Record<UsageResource, UsageWindowSpan>;
  period: { start: Date; end: Date };
  /** `YYYY-MM-DD` of the current UTC day. */
  day: string;
}

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The UTC day containing `now`. */
export function utcDay(now: Date): { key: string; start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { key: isoDay(start), start, end: new Date(start.getTime() + DAY_MS) };
}

/** The plan limits of a stored code: `scale_plus` meters as scale; an unknown code as launch. */
function planOf(code: string): Plan {
  if (code in PLANS) return PLANS[code as PlanCode];
  return code === 'scale_plus' ? PLANS.scale : PLANS.launch;
}

function displayCode(code: string, plan: Plan): DisplayPlanCode {
  return (DISPLAY_PLAN_CODES as readonly string[]).includes(code)
    ? (code as DisplayPlanCode)
    : plan.code;
}

/**
 * The period containing `now`: the stored one while it lasts, then (for an internal grant, or a
 * billing entitlement in grace) the following periods of the plan's length, so counters reset on
 * schedule even before the row itself is moved on.
 */
export function currentPeriod(
  entitlement: Pick<WorkspaceEntitlement, 'periodStart' | 'periodEnd'>,
  plan: Plan,
  now: Date,
): { start: Date; end: Date } {
  const { periodStart, periodEnd } = entitlement;
  if (now < periodEnd || now < periodStart) return { start: periodStart, end: periodEnd };
  const length = plan.periodDays * DAY_MS;
  const skipped = Math.floor((now.getTime() - periodEnd.getTime()) / length);
  const start = new Date(periodEnd.getTime() + skipped * length);
  return { start, end: new Date(start.getTime() + length) };
}

export function entitlementState(entitlement: WorkspaceEntitlement, now: Date): EntitlementState {
  const inForce =
    entitlement.status === 'active' &&
    (entitlement.entitlementSource === 'internal_grant' || now < entitlement.periodEnd);
  if (inForce) return 'active';
  if (entitlement.graceUntil && now < entitlement.graceUntil) return 'grace';
  return 'lapsed';
}

const DAILY_RESOURCES = USAGE_RESOURCES.filter((r) => USAGE_WINDOWS[r] === 'day');

/**
 * What an entitlement (or none: a workspace of a billing install that never paid) means at
 * `now`: plan, state, caps and windows.
 */
export function effectivePlan(
  workspaceId: string,
  entitlement: WorkspaceEntitlement | undefined,
  now: Date,
  /** Free workspaces that share one owner's daily caps ({@link PlanServiceOptions.ownerShare}). */
  dailyShare = 1,
): EffectivePlan {
  const day = utcDay(now);
  const plan = entitlement ? planOf(entitlement.plan) : PLANS.launch;
  const state = entitlement ? entitlementState(entitlement, now) : 'lapsed';
  const period = entitlement
    ? currentPeriod(entitlement, plan, now)
    : { start: day.start, end: day.end };
  const caps = planCaps(plan);
  if (state === 'grace') {
    const floor = planCaps(PLANS.launch);
    for (const resource of DAILY_RESOURCES)
      caps[resource] = Math.min(caps[resource], floor[resource]);
  }
  if (entitlement?.entitlementSource === 'internal_grant' && dailyShare > 1) {
    // One owner's free workspaces split one workspace's daily caps: a new workspace is not a
    // new day's worth of free usage.
    for (const resource of DAILY_RESOURCES)
      caps[resource] = Math.max(1, Math.floor(caps[resource] / dailyShare));
  }
  const spans: Record<UsageWindow, UsageWindowSpan> = {
    day: { kind: 'day', start: day.key, resetsAt: day.end },
    period: { kind: 'period', start: isoDay(period.start), resetsAt: period.end },
    total: { kind: 'total', start: TOTAL_WINDOW_START, resetsAt: undefined },
  };
  const windows = Object.fromEntries(
    USAGE_RESOURCES.map((resource) => [resource, spans[USAGE_WINDOWS[resource]]]),
  ) as Record<UsageResource, UsageWindowSpan>;
  return {
    workspaceId,
    plan,
    displayPlan: entitlement ? displayCode(entitlement.plan, plan) : plan.code,
    source: entitlement?.entitlementSource ?? 'billing',
    state,
    status: entitlement?.status,
    caps,
    windows,
    period,
    day: day.key,
  };
}

/** Reads a workspace's entitlement; throws when it cannot be verified. */
export type EntitlementLoader = (
  workspaceId: string,
  now: Date,
) => Promise<WorkspaceEntitlement | undefined>;

/**
 * The entitlement store: the row, and on an install without billing (`internalGrantPlan` set)
 * an internal grant on that plan for a workspace that has none, starting the UTC day it is first
 * used. An internal grant whose period has ended is moved on to the current one.
 */
export function databaseEntitlements(
  db: Database,
  internalGrantPlan: PlanCode | undefined,
): EntitlementLoader {
  return async (workspaceId, now) => {
    let row = await getEntitlement(db, workspaceId);
    if (!row && internalGrantPlan) {
      const start = utcDay(now).start;
      row = await grantInternalEntitlement(db, {
        workspaceId,
        plan: internalGrantPlan,
        periodStart: start,
        periodEnd: new Date(start.getTime() + PLANS[internalGrantPlan].periodDays * DAY_MS),
      });
    }
    if (row?.entitlementSource === 'internal_grant' && now >= row.periodEnd) {
      const period = currentPeriod(row, planOf(row.plan), now);
      await rollEntitlementPeriod(db, {
        workspaceId,
        fromPeriodStart: row.periodStart,
        periodStart: period.start,
        periodEnd: period.end,
      });
      row = await getEntitlement(db, workspaceId);
    }
    return row;
  };
}

export interface PlanServiceOptions {
  /**
   * The plan of the internal grant a workspace without an entitlement gets (self-hosted, no
   * billing); undefined: none, such a workspace has no plan in force.
   */
  internalGrantPlan: PlanCode | undefined;
  /**
   * Whether plan retention applies to workspaces on an internal grant (default true). False for
   * a self-hosted install on the default plan: its operator never chose a retention.
   */
  internalGrantRetention?: boolean;
  /** How long an entitlement read is reused; 0 reads it every time. Default 30 s. */
  cacheMs?: number;
  /** Where entitlements come from; default the database (tests inject failures here). */
  loader?: EntitlementLoader;
  /**
   * How many workspaces share the daily caps of this one, a workspace on an internal grant (no
   * payment): the number its owner owns (default, from the database, when `loader` is not given;
   * else 1). Each gets an equal part, so a dashboard user's workspaces together never have more
   * than one workspace's daily caps.
   */
  ownerShare?: (workspaceId: string) => Promise<number>;
  /** Told why an entitlement could not be read. */
  logger?: Logger;
}

/** Seconds a client should wait after an entitlement check failed. */
export const ENTITLEMENT_RETRY_AFTER_SECONDS = 30;

interface CachedEntitlement {
  entitlement: WorkspaceEntitlement | undefined;
  /** When it was read (ms). */
  at: number;
  /** Workspaces sharing its owner's daily caps (1: none). */
  dailyShare: number;
  /** The effective plan computed from it, and the span of time (ms) it holds for. */
  plan?: { value: EffectivePlan; from: number; until: number };
}

/**
 * The effective plan of a cached entitlement, computed again only when `now` leaves the span it
 * was computed for: metered requests resolve the plan two or three times each, and it changes
 * only at the end of the UTC day or of the period, and at the entitlement's start, end or grace.
 */
function planOfCached(workspaceId: string, cached: CachedEntitlement, now: Date): EffectivePlan {
  const at = now.getTime();
  if (cached.plan && at >= cached.plan.from && at < cached.plan.until) return cached.plan.value;
  const value = effectivePlan(workspaceId, cached.entitlement, now, cached.dailyShare);
  const changes = [utcDay(now).end, value.period.end];
  const { periodStart, periodEnd, graceUntil } = cached.entitlement ?? {};
  for (const moment of [periodStart, periodEnd, graceUntil])
    if (moment && moment > now) changes.push(moment);
  cached.plan = { value, from: at, until: Math.min(...changes.map((d) => d.getTime())) };
  return value;
}

/**
 * Resolves a workspace's effective plan from its entitlement. Reads are cached briefly per
 * workspace (quotas are checked on every metered request); the effective plan is computed at
 * each call, so days and periods turn over on time. When the entitlement cannot be read, the
 * call throws 503 `ENTITLEMENT_DEGRADED`; the last plan read stays available to reads.
 */
export class PlanService {
  private readonly cache = new Map<string, CachedEntitlement>();
  private readonly cacheMs: number;
  private readonly loader: EntitlementLoader;
  private readonly ownerShare: (workspaceId: string) => Promise<number>;
  private readonly logger: Logger | undefined;
  readonly internalGrantPlan: PlanCode | undefined;
  readonly internalGrantRetention: boolean;

  constructor(db: Database, options: PlanServiceOptions) {
    this.internalGrantPlan = options.internalGrantPlan;
    this.internalGrantRetention = options.internalGrantRetention ?? true;
    this.cacheMs = options.cacheMs ?? 30_000;
    this.loader = options.loader ?? databaseEntitlements(db, options.internalGrantPlan);
    this.ownerShare =
      options.ownerShare ??
      (options.loader
        ? async () => 1
        : async (workspaceId) => Math.max(1, await workspacesOfItsOwner(db, workspaceId)));
    this.logger = options.logger;
  }

  async resolve(workspaceId: string, now: Date = new Date()): Promise<EffectivePlan> {
    return this.cached(workspaceId, now) ?? this.load(workspaceId, now);
  }

  /** The plan while its cached read is fresh, without waiting; undefined: `resolve` must read. */
  cached(workspaceId: string, now: Date = new Date()): EffectivePlan | undefined {
    const cached = this.cache.get(workspaceId);
    if (cached && now.getTime() - cached.at < this.cacheMs) {
      return planOfCached(workspaceId, cached, now);
    }
    return undefined;
  }

  private async load(workspaceId: string, now: Date): Promise<EffectivePlan> {
    let entitlement: WorkspaceEntitlement | undefined;
    let dailyShare = 1;
    try {
      entitlement = await this.loader(workspaceId, now);
      if (entitlement?.entitlementSource === 'internal_grant')
        dailyShare = await this.ownerShare(workspaceId);
    } catch (err) {
      this.logger?.warn({ err, workspace_id: workspaceId }, 'entitlement check failed');
      throw new ServiceError(
        'ENTITLEMENT_DEGRADED',
        'The workspace entitlement cannot be verified right now; requests that consume quota are refused until it can',
        undefined,
        { 'Retry-After': String(ENTITLEMENT_RETRY_AFTER_SECONDS) },
      );
    }
    const entry: CachedEntitlement = { entitlement, at: now.getTime(), dailyShare };
    this.cache.set(workspaceId, entry);
    return planOfCached(workspaceId, entry, now);
  }

  /** The plan from the last successful read, however old; undefined if none. */
  lastKnown(workspaceId: string, now: Date = new Date()): EffectivePlan | undefined {
    const cached = this.cache.get(workspaceId);
    return cached ? planOfCached(workspaceId, cached, now) : undefined;
  }

  /** Forgets cached reads (after billing changed an entitlement); all when no id is given. */
  invalidate(workspaceId?: string): void {
    if (workspaceId === undefined) this.cache.clear();
    else this.cache.delete(workspaceId);
  }
}

const count = (n: number) => n.toLocaleString('en-US');

type LimitsSummaryConfig = Pick<AppConfig, 'limits' | 'billing' | 'rateLimits' | 'retention'>;

/**
 * The limits this install runs with, as the one line the server logs at start: a self-hoster
 * learns the plan, the request limits and whether memories are ever archived, and which
 * variable changes them (docs/deploy.md, "Limits of a self-hosted install").
 */
export function limitsSummary(config: LimitsSummaryConfig): {
  message: string;
  fields: Record<string, unknown>;
} {
  if (!config.limits.enabled) {
    return {
      message: 'limits: off (MNEMO_LIMITS=off): no plan caps, rate limits or retention',
      fields: { limits: 'off' },
    };
  }
  const perKey = config.rateLimits.keyPerMinute;
  if (config.billing.provider !== 'none') {
    return {
      message: `limits: billing (${config.billing.provider}) sets each workspace's plan and its retention; ${perKey} requests/min per API key`,
      fields: { limits: 'billing', key_rpm: perKey },
    };
  }
  const plan = PLANS[config.limits.internalGrantPlan];
  const workspaceRpm = config.rateLimits.workspacePerMinute ?? plan.workspaceRpm;
  const retentionDays =
    config.limits.internalGrantRetention && config.retention.intervalMs > 0
      ? plan.retentionDays
      : null;
  const chosen = config.limits.internalGrantRetention;
  const retention =
    retentionDays === null
      ? 'no retention: memories are kept until deleted'
      : `retention: memories older than ${retentionDays} days are archived daily`;
  const change = chosen
    ? '(MNEMO_INTERNAL_GRANT_PLAN)'
    : '(the self-hosted default; MNEMO_INTERNAL_GRANT_PLAN chooses a plan and its retention, MNEMO_LIMITS=off lifts every limit)';
  return {
    message:
      `limits: plan ${plan.code}, ${perKey} requests/min per API key, ${workspaceRpm} per workspace, ` +
      `${count(plan.writesPerDay)} writes and ${count(plan.readsPerDay)} reads a day; ${retention} ${change}`,
    fields: {
      plan: plan.code,
      plan_chosen: chosen,
      key_rpm: perKey,
      workspace_rpm: workspaceRpm,
      writes_per_day: plan.writesPerDay,
      reads_per_day: plan.readsPerDay,
      retention_days: retentionDays,
    },
  };
}

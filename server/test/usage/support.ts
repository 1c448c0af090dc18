import type { UsageResource } from '@mnemo/contract';
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';
import { upsertEntitlement } from '../../src/db/queries/entitlements.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { usageCounters, usageReservations } from '../../src/db/schema/index.js';
import { type EntitlementLoader, PlanService } from '../../src/services/plans.js';
import type { QuotaGate } from '../../src/services/quota.js';
import { createMeteredQuota } from '../../src/services/usage/index.js';
import type { BlockMeteringOptions } from '../../src/services/usage/blocks.js';
import type { TestApp } from '../support/app.js';

/** A settable clock for the gate and the plans. */
export class Clock {
  constructor(public at: Date) {}
  now = () => new Date(this.at);
  set(iso: string) {
    this.at = new Date(iso);
  }
  advance(ms: number) {
    this.at = new Date(this.at.getTime() + ms);
  }
}

export interface Meter {
  gate: QuotaGate;
  plans: PlanService;
  clock: Clock;
}

/** A metered gate over `db` with no entitlement cache, so entitlement changes apply at once. */
export function meter(
  db: Database,
  options: {
    clock?: Clock;
    internalGrantPlan?: 'launch' | 'build' | 'deploy' | 'scale' | undefined;
    loader?: EntitlementLoader;
    reservationTtlMs?: number;
    blocks?: BlockMeteringOptions;
  } = {},
): Meter {
  const clock = options.clock ?? new Clock(new Date('2026-03-10T12:00:00Z'));
  const plans = new PlanService(db, {
    internalGrantPlan: 'internalGrantPlan' in options ? options.internalGrantPlan : 'launch',
    cacheMs: 0,
    ...(options.loader ? { loader: options.loader } : {}),
  });
  const gate = createMeteredQuota({
    db,
    plans,
    now: clock.now,
    ...(options.reservationTtlMs ? { reservationTtlMs: options.reservationTtlMs } : {}),
    ...(options.blocks ? { blocks: options.blocks } : {}),
  });
  return { gate, plans, clock };
}

export async function newWorkspace(db: Database, name = 'usage'): Promise<string> {
  return (await createWorkspace(db, { name })).id;
}

/** A billing entitlement on `plan` for the period [start, end). */
export async function billingEntitlement(
  db: Database,
  workspaceId: string,
  plan: string,
  period: { start: string; end: string },
  extra: { status?: 'active' | 'past_due' | 'canceled'; graceUntil?: string } = {},
) {
  return upsertEntitlement(db, {
    workspaceId,
    plan,
    status: extra.status ?? 'active',
    periodStart: new Date(period.start),
    periodEnd: new Date(period.end),
    entitlementSource: 'billing',
    graceUntil: extra.graceUntil ? new Date(extra.graceUntil) : null,
  });
}

/** used/reserved of one counter (zeros when the row does not exist). */
export async function counter(
  db: Database,
  workspaceId: string,
  resource: string,
  windowStart: string,
): Promise<{ used: number; reserved: number }> {
  const [row] = await db
    .select({ used: usageCounters.used, reserved: usageCounters.reserved })
    .from(usageCounters)
    .where(
      and(
        eq(usageCounters.workspaceId, workspaceId),
        eq(usageCounters.resource, resource),
        eq(usageCounters.windowStart, windowStart),
      ),
    );
  return { used: Number(row?.used ?? 0), reserved: Number(row?.reserved ?? 0) };
}

export async function reservationStates(db: Database, workspaceId: string): Promise<string[]> {
  const rows = await db
    .select({ state: usageReservations.state })
    .from(usageReservations)
    .where(eq(usageReservations.workspaceId, workspaceId));
  return rows.map((r) => r.state).sort();
}

/** The ServiceError a promise rejects with (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<{
  code: string;
  status: number;
  message: string;
  details?: Record<string, string[]>;
  headers: Record<string, string>;
}> {
  try {
    await promise;
  } catch (error) {
    return error as never;
  }
  throw new Error('expected the promise to reject');
}

/**
 * Puts a workspace's counter of one resource at `used` in the window it counts in now; returns the
 * resource's cap.
 */
export async function setUsed(
  t: TestApp,
  workspaceId: string,
  resource: UsageResource,
  used: number,
): Promise<number> {
  const plan = await t.deps.plans.resolve(workspaceId);
  const window = plan.windows[resource];
  await t.database.db
    .insert(usageCounters)
    .values({
      workspaceId,
      windowKind: window.kind,
      windowStart: window.start,
      resource,
      used,
      reserved: 0,
    })
    .onConflictDoUpdate({
      target: [
        usageCounters.workspaceId,
        usageCounters.windowKind,
        usageCounters.windowStart,
        usageCounters.resource,
      ],
      set: { used: sql`excluded.used` },
    });
  return plan.caps[resource];
}

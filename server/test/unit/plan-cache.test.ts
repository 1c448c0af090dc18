import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import type { WorkspaceEntitlement } from '../../src/db/schema/index.js';
import { PlanService } from '../../src/services/plans.js';

const WORKSPACE = '11111111-1111-4111-8111-111111111111';
const HOUR = 3_600_000;

/** A plan service over one fixed entitlement, counting how often it is read. */
function service(entitlement: WorkspaceEntitlement) {
  const reads = { count: 0 };
  const plans = new PlanService(undefined as unknown as Database, {
    internalGrantPlan: undefined,
    cacheMs: 10 * 24 * HOUR,
    loader: async () => {
      reads.count += 1;
      return entitlement;
    },
  });
  return { plans, reads };
}

describe('plan cache: the effective plan follows the clock between entitlement reads', () => {
  it('turns the UTC day over at midnight', async () => {
    const { plans, reads } = service({
      workspaceId: WORKSPACE,
      plan: 'build',
      status: 'active',
      periodStart: new Date('2026-03-01T00:00:00Z'),
      periodEnd: new Date('2026-03-31T00:00:00Z'),
      entitlementSource: 'internal_grant',
      graceUntil: null,
    } as WorkspaceEntitlement);
    const before = await plans.resolve(WORKSPACE, new Date('2026-03-10T23:59:59.900Z'));
    const again = await plans.resolve(WORKSPACE, new Date('2026-03-10T23:59:59.950Z'));
    const after = await plans.resolve(WORKSPACE, new Date('2026-03-11T00:00:00.050Z'));
    expect([before.day, again.day, after.day]).toEqual(['2026-03-10', '2026-03-10', '2026-03-11']);
    expect(after.windows.reads.start).toBe('2026-03-11');
    expect(reads.count).toBe(1);
  });

  it('moves a billing entitlement from active to grace to lapsed on time', async () => {
    const periodEnd = new Date('2026-03-31T00:00:00Z');
    const { plans, reads } = service({
      workspaceId: WORKSPACE,
      plan: 'deploy',
      status: 'active',
      periodStart: new Date('2026-03-01T00:00:00Z'),
      periodEnd,
      entitlementSource: 'billing',
      graceUntil: new Date(periodEnd.getTime() + 3 * HOUR),
    } as WorkspaceEntitlement);
    const at = (offsetMs: number) => new Date(periodEnd.getTime() + offsetMs);
    const states = [];
    for (const offset of [-HOUR, -1, 1, 2 * HOUR, 3 * HOUR - 1, 3 * HOUR + 1]) {
      states.push((await plans.resolve(WORKSPACE, at(offset))).state);
    }
    expect(states).toEqual(['active', 'active', 'grace', 'grace', 'grace', 'lapsed']);
    // Back in time (a test clock, a corrected system clock): computed again, not reused.
    expect((await plans.resolve(WORKSPACE, at(-HOUR))).state).toBe('active');
    expect(reads.count).toBe(1);
  });
});

import { planCaps, PLANS } from '@mnemo/contract';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOwnedWorkspace } from '../../src/db/queries/dashboard.js';
import { PlanService } from '../../src/services/plans.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';
import { newWorkspace } from './support.js';

describeDb("one owner's free workspaces share one workspace's daily caps", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  }, 60_000);
  afterAll(async () => database?.close());

  const launch = planCaps(PLANS.launch);
  const plans = () => new PlanService(database.db, { internalGrantPlan: 'launch', cacheMs: 0 });

  it('a new workspace is not a new day of free usage: the daily caps are split, the rest kept', async () => {
    const first = await createOwnedWorkspace(database.db, { name: 'one', userId: 'sharer' });
    const alone = await plans().resolve(first.id);
    expect(alone.caps.writes).toBe(launch.writes);

    const more = [
      await createOwnedWorkspace(database.db, { name: 'two', userId: 'sharer' }),
      await createOwnedWorkspace(database.db, { name: 'three', userId: 'sharer' }),
    ];
    const resolved = await Promise.all([first, ...more].map((w) => plans().resolve(w.id)));
    for (const plan of resolved) {
      // Before, each of them had the whole launch day: three workspaces, three times the writes.
      expect(plan.caps.writes).toBe(Math.floor(launch.writes / 3));
      expect(plan.caps.reads).toBe(Math.floor(launch.reads / 3));
      // Storage and the period's token caps are not daily: unchanged.
      expect(plan.caps.embed_tokens).toBe(launch.embed_tokens);
      expect(plan.caps.storage).toBe(launch.storage);
    }
    expect(resolved.reduce((sum, plan) => sum + plan.caps.writes, 0)).toBeLessThanOrEqual(
      launch.writes,
    );
  });

  it('leaves workspaces no dashboard user owns, and other owners, at the full caps', async () => {
    const operatorMade = await newWorkspace(database.db, 'bootstrap');
    expect((await plans().resolve(operatorMade)).caps.writes).toBe(launch.writes);
    const other = await createOwnedWorkspace(database.db, { name: 'solo', userId: 'someone-else' });
    expect((await plans().resolve(other.id)).caps.writes).toBe(launch.writes);
  });
});

import { contract, MemoryRetentionReport } from '@mnemo/contract';
import { eq, inArray } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memories } from '../../src/db/schema/index.js';
import { runRetention } from '../../src/jobs/retention.js';
import { PlanService } from '../../src/services/plans.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { billingEntitlement } from './support.js';

const TOKEN = 'admin-token-0123456789';
const PATH = contract.admin.runMemoryRetention.path;
const DAY_MS = 86_400_000;
/** Migrating a fresh database and writing the fixtures is slow on a busy machine. */
const HOOK_TIMEOUT_MS = 120_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

/** A paid period around now, so the workspace's effective plan is `plan` for the whole test. */
async function onPlan(t: TestApp, tenant: TestTenant, plan: string): Promise<void> {
  await billingEntitlement(t.database.db, tenant.workspaceId, plan, {
    start: daysAgo(1).toISOString(),
    end: daysAgo(-29).toISOString(),
  });
  t.deps.plans.invalidate(tenant.workspaceId);
}

async function write(t: TestApp, tenant: TestTenant, text: string): Promise<string> {
  const res = await request(t.app)
    .post('/v1/memories')
    .set('x-api-key', tenant.apiKey)
    .send({ text, user_id: 'ret' });
  expect(res.status).toBe(200);
  return res.body.memory_id as string;
}

/** Moves memories' `created_at` back: the only way to make them old. */
async function age(t: TestApp, ids: string[], days: number): Promise<void> {
  await t.database.db
    .update(memories)
    .set({ createdAt: daysAgo(days) })
    .where(inArray(memories.id, ids));
}

async function statesOf(t: TestApp, ids: string[]): Promise<string[]> {
  const rows = await t.database.db
    .select({ id: memories.id, state: memories.lifecycleState })
    .from(memories)
    .where(inArray(memories.id, ids));
  const byId = new Map(rows.map((r) => [r.id, r.state]));
  return ids.map((id) => byId.get(id) ?? 'missing');
}

describeDb('POST /admin/memory-retention', () => {
  let t: TestApp;
  let launch: TestTenant;
  let scale: TestTenant;
  const old: string[] = [];
  const young: string[] = [];
  const scaleOld: string[] = [];

  const retention = (query = '') =>
    request(t.app).post(`${PATH}${query}`).set('x-admin-token', TOKEN);

  beforeAll(async () => {
    // Extraction off: no child memories, so every count below is the memories written here.
    t = await createTestApp({
      MNEMO_ADMIN_TOKEN: TOKEN,
      MNEMO_LIMITS: 'on',
      MNEMO_EXTRACTION_PROVIDER: 'none',
    });
    launch = t.tenant;
    scale = await t.addTenant('scale');
    await onPlan(t, launch, 'launch'); // 30 days
    await onPlan(t, scale, 'scale'); // 365 days
    for (const text of [
      'Ret practises the violin every evening',
      'Ret paddled a kayak across the fjord last summer',
      'Sourdough bread is baked by Ret on Sundays',
      'Ret won the regional chess tournament',
      'Orchids fill the greenhouse behind the house of Ret',
    ])
      old.push(await write(t, launch, text));
    young.push(await write(t, launch, 'Ret adopted a tortoise named Gus'));
    young.push(await write(t, launch, 'Ret collects vintage typewriters'));
    scaleOld.push(await write(t, scale, 'Ret practises the violin every evening'));
    scaleOld.push(await write(t, scale, 'Ret collects vintage typewriters'));
    // Launch keeps 30 days: 31 and 100 days old are past it, 29 is not. Scale keeps 365.
    await age(t, old.slice(0, 2), 100);
    await age(t, old.slice(2), 31);
    await age(t, young.slice(0, 1), 29);
    await age(t, scaleOld, 100);
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it('requires the admin token', async () => {
    const res = await request(t.app).post(PATH);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('validates its query like hygiene: limit 1..10000, no unknown parameters', async () => {
    const res = await retention('?limit=10001&workspace=typo');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({
      limit: [expect.stringContaining('10000')],
      query: ['unknown field(s): workspace'],
    });
  });

  it('dry run reports what is past retention per workspace and changes nothing', async () => {
    const res = await retention('?dry_run=true');
    expect(res.status).toBe(200);
    expect(MemoryRetentionReport.parse(res.body)).toEqual(res.body);
    expect(res.body).toMatchObject({
      dry_run: true,
      enforced: true,
      limit: 1000,
      examined: 5,
      archived: 0,
      has_more: false,
      skipped: [],
    });
    expect(res.body.workspaces).toEqual([
      {
        workspace_id: launch.workspaceId,
        plan: 'launch',
        retention_days: 30,
        cutoff: expect.any(String),
        examined: 5,
        archived: 0,
      },
    ]);
    expect(await statesOf(t, old)).toEqual(Array(5).fill('active'));
  });

  it('archives oldest first in batches of `limit`, never deletes, and a second run archives nothing', async () => {
    const first = await retention('?limit=2');
    expect(first.body).toMatchObject({ examined: 2, archived: 2, has_more: true });
    // The two oldest (100 days) go first.
    expect(await statesOf(t, old)).toEqual(['archived', 'archived', 'active', 'active', 'active']);

    const second = await retention(`?limit=2&workspace_id=${launch.workspaceId}`);
    expect(second.body).toMatchObject({ examined: 2, archived: 2, has_more: true });
    const third = await retention('?limit=2');
    expect(third.body).toMatchObject({ examined: 1, archived: 1, has_more: false });
    expect(await statesOf(t, old)).toEqual(Array(5).fill('archived'));

    const again = await retention();
    expect(again.body).toMatchObject({ examined: 0, archived: 0, has_more: false, workspaces: [] });
    expect(await statesOf(t, young)).toEqual(['active', 'active']);
  });

  it('leaves a workspace on a longer plan alone', async () => {
    expect(await statesOf(t, scaleOld)).toEqual(['active', 'active']);
    const res = await retention(`?workspace_id=${scale.workspaceId}`);
    expect(res.body).toMatchObject({ examined: 0, archived: 0, workspaces: [] });
  });

  it('records why on the memory, which GET still reads but search no longer finds', async () => {
    const view = await request(t.app).get(`/v1/memories/${old[0]}`).set('x-api-key', launch.apiKey);
    expect(view.status).toBe(200);
    expect(view.body.lifecycle_events).toEqual([
      expect.objectContaining({
        event: 'archived',
        rule: 'retention',
        details: expect.objectContaining({ plan: 'launch', retention_days: 30 }),
      }),
    ]);
    const [row] = await t.database.db.select().from(memories).where(eq(memories.id, old[0]!));
    expect(row?.lifecycleState).toBe('archived');

    const search = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', launch.apiKey)
      .send({ query: 'violin', user_id: 'ret', search_mode: 'keyword' });
    expect(search.status).toBe(200);
    expect(search.body.results).toEqual([]);
    const youngHit = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', launch.apiKey)
      .send({ query: 'tortoise', user_id: 'ret', search_mode: 'keyword' });
    expect(youngHit.body.results.map((r: { memory_id: string }) => r.memory_id)).toEqual([
      young[0],
    ]);
  });

  it('skips a workspace whose entitlement cannot be verified', async () => {
    const tenant = await t.addTenant('degraded');
    const [id] = [await write(t, tenant, 'Ret grows bonsai trees')];
    await age(t, [id!], 400);
    const failing = new PlanService(t.database.db, {
      internalGrantPlan: 'launch',
      loader: async () => {
        throw new Error('entitlement store down');
      },
    });
    const report = await runRetention(
      { db: t.database.db, plans: failing },
      { dryRun: false, limit: 100, workspaceId: tenant.workspaceId, limitsEnabled: true },
    );
    expect(report).toMatchObject({
      archived: 0,
      skipped: [{ workspace_id: tenant.workspaceId, reason: 'entitlement_unverifiable' }],
    });
    expect(await statesOf(t, [id!])).toEqual(['active']);
  });
});

describeDb('POST /admin/memory-retention with MNEMO_LIMITS=off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      MNEMO_ADMIN_TOKEN: TOKEN,
      MNEMO_LIMITS: 'off',
      MNEMO_EXTRACTION_PROVIDER: 'none',
    });
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it('archives nothing: no plan is in force', async () => {
    const id = await write(t, t.tenant, 'Ret kept a diary in 2019');
    await age(t, [id], 4000);
    const res = await request(t.app).post(PATH).set('x-admin-token', TOKEN);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ enforced: false, examined: 0, archived: 0, workspaces: [] });
    expect(await statesOf(t, [id])).toEqual(['active']);
  });
});

describeDb('retention on a self-hosted install (no billing)', () => {
  let onDefault: TestApp;
  let chosen: TestApp;
  beforeAll(async () => {
    const env = { MNEMO_ADMIN_TOKEN: TOKEN, MNEMO_LIMITS: 'on', MNEMO_EXTRACTION_PROVIDER: 'none' };
    onDefault = await createTestApp(env);
    chosen = await createTestApp({ ...env, MNEMO_INTERNAL_GRANT_PLAN: 'scale' });
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await onDefault?.close();
    await chosen?.close();
  });

  it('archives nothing on the default plan: the operator chose no retention', async () => {
    const id = await write(onDefault, onDefault.tenant, 'Ret sailed to Gotland in 2020');
    await age(onDefault, [id], 400);
    const usage = await request(onDefault.app)
      .get('/v1/usage/today')
      .set('x-api-key', onDefault.tenant.apiKey);
    expect(usage.body).toMatchObject({ plan: 'scale', entitlement_source: 'internal_grant' });
    const res = await request(onDefault.app).post(PATH).set('x-admin-token', TOKEN);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      enforced: true,
      archived: 0,
      workspaces: [],
      skipped: [
        {
          workspace_id: onDefault.tenant.workspaceId,
          reason: 'self_hosted_default_keeps_memories',
        },
      ],
    });
    expect(await statesOf(onDefault, [id])).toEqual(['active']);
  });

  it("archives past the chosen plan's retention when MNEMO_INTERNAL_GRANT_PLAN is set", async () => {
    const [old, young] = [
      await write(chosen, chosen.tenant, 'Ret sailed to Gotland in 2020'),
      await write(chosen, chosen.tenant, 'Ret sails to Åland next week'),
    ];
    await age(chosen, [old], 400);
    const res = await request(chosen.app).post(PATH).set('x-admin-token', TOKEN);
    expect(res.body).toMatchObject({
      archived: 1,
      skipped: [],
      workspaces: [{ workspace_id: chosen.tenant.workspaceId, plan: 'scale', retention_days: 365 }],
    });
    expect(await statesOf(chosen, [old, young])).toEqual(['archived', 'active']);
  });
});

describe('retention contract', () => {
  it('keeps the spec path', () => {
    expect(`${contract.admin.runMemoryRetention.method} ${PATH}`).toBe(
      'POST /admin/memory-retention',
    );
  });
});

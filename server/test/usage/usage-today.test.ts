import { contract, UsageResponse } from '@mnemo/contract';
import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getEntitlement } from '../../src/db/queries/entitlements.js';
import { memories } from '../../src/db/schema/index.js';
import { databaseEntitlements, PlanService } from '../../src/services/plans.js';
import type { QuotaGate } from '../../src/services/quota.js';
import { usageToday } from '../../src/services/usage/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { billingEntitlement, newWorkspace } from './support.js';

const DAY_MS = 86_400_000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
const today = () => new Date().toISOString().slice(0, 10);

/** Every field of the spec's Usage response. */
const SPEC_FIELDS = [
  'plan',
  'writes',
  'reads',
  'embeds',
  'day',
  'workspace_id',
  'entitlement_active',
  'entitlement_source',
  'limits',
  'caps',
  'cap_alerts',
  'operational_mode',
  'grace_soft_downgrade',
].sort();

describeDb('GET /v1/usage/today', () => {
  let t: TestApp;
  let gate: QuotaGate;

  const usage = (tenant: TestTenant, app = t.app) =>
    request(app).get('/v1/usage/today').set('x-api-key', tenant.apiKey);

  beforeAll(async () => {
    // The server's own wiring: the metered gate (deps.quota) and the default internal grant.
    t = await createTestApp({ MNEMO_LIMITS: 'on' });
    gate = t.deps.quota;
  });
  afterAll(async () => t?.close());

  it('is in the contract as a tenant route', () => {
    expect(contract.usage.getUsageToday).toMatchObject({
      method: 'GET',
      path: '/v1/usage/today',
      metadata: { auth: 'api_key_or_session' },
    });
  });

  it('answers a fresh self-hosted workspace with every spec field: an internal grant, no usage', async () => {
    const tenant = await t.addTenant('fresh');
    const res = await usage(tenant);
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(UsageResponse.strict().parse(res.body)).toEqual(res.body);
    expect(Object.keys(res.body).sort()).toEqual(SPEC_FIELDS);
    const limits = { writes: 20_000, reads: 60_000, embeds: 80_000 };
    expect(res.body).toEqual({
      plan: 'scale',
      writes: 0,
      reads: 0,
      embeds: 0,
      day: today(),
      workspace_id: tenant.workspaceId,
      entitlement_active: true,
      entitlement_source: 'internal_grant',
      limits,
      caps: limits,
      cap_alerts: [],
      operational_mode: 'normal',
      grace_soft_downgrade: false,
    });
  });

  it('counts what the write path commits', async () => {
    const tenant = await t.addTenant('writer');
    const write = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', tenant.apiKey)
      .send({ text: 'Jane prefers window seats on long flights', user_id: 'jane' });
    expect(write.status).toBe(200);
    const res = await usage(tenant);
    expect(res.body.writes).toBe(1);
    expect(res.body.embeds).toBeGreaterThanOrEqual(1);
    expect(res.body.reads).toBe(0);
  });

  it('a write over the daily cap answers 429 CAP_EXCEEDED with Retry-After and writes nothing', async () => {
    const tenant = await t.addTenant('capped');
    await billingEntitlement(t.database.db, tenant.workspaceId, 'launch', {
      start: iso(-DAY_MS),
      end: iso(6 * DAY_MS),
    });
    await (await gate.reserve({ workspaceId: tenant.workspaceId, writes: 250 })).commit();
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', tenant.apiKey)
      .send({ text: 'Jane moved to Lisbon in May', user_id: 'jane' });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      error: {
        code: 'CAP_EXCEEDED',
        message: expect.stringMatching(/launch plan exceeded: writes \(today\)/),
        details: { writes: [expect.stringMatching(/250 of 250/)] },
      },
      request_id: res.headers['x-request-id'],
    });
    const midnight =
      new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z').getTime() + DAY_MS;
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(Math.abs(retryAfter - (midnight - Date.now()) / 1000)).toBeLessThan(5);
    const stored = await t.database.db
      .select({ id: memories.id })
      .from(memories)
      .where(eq(memories.workspaceId, tenant.workspaceId));
    expect(stored).toEqual([]);
    expect((await usage(tenant)).body.writes).toBe(250);
  });

  it('reports cap alerts from 80 % (warning) and 95 % (critical), daily, period and storage', async () => {
    const tenant = await t.addTenant('busy');
    await billingEntitlement(t.database.db, tenant.workspaceId, 'launch', {
      start: iso(-DAY_MS),
      end: iso(6 * DAY_MS),
    });
    const ws = tenant.workspaceId;
    await (await gate.reserve({ workspaceId: ws, writes: 200, embeds: 100 })).commit();
    await (await gate.reserve({ workspaceId: ws, reads: 950 })).commit();
    await (await gate.reserve({ workspaceId: ws, embedTokens: 85_000 })).commit();
    await (await gate.reserve({ workspaceId: ws, extractionCalls: 250, genTokens: 1 })).commit();
    await (await gate.reserve({ workspaceId: ws, storageBytes: 480_000_000 })).commit();
    // Held but not committed: not "consumed today".
    const open = await gate.reserve({ workspaceId: ws, writes: 10 });

    const res = await usage(tenant);
    expect(res.status).toBe(200);
    UsageResponse.parse(res.body);
    expect(res.body).toMatchObject({
      plan: 'launch',
      writes: 200,
      reads: 950,
      embeds: 100,
      entitlement_active: true,
      entitlement_source: 'billing',
      limits: { writes: 250, reads: 1000, embeds: 1250 },
      operational_mode: 'normal',
      grace_soft_downgrade: false,
    });
    expect(res.body.cap_alerts).toEqual([
      { resource: 'writes', severity: 'warning', used: 200, cap: 250, ratio: 0.8 },
      { resource: 'reads', severity: 'critical', used: 950, cap: 1000, ratio: 0.95 },
      { resource: 'embed_tokens', severity: 'warning', used: 85_000, cap: 100_000, ratio: 0.85 },
      { resource: 'extraction_calls', severity: 'critical', used: 250, cap: 250, ratio: 1 },
      { resource: 'storage', severity: 'critical', used: 480_000_000, cap: 5e8, ratio: 0.96 },
    ]);
    await open.release();
  });

  it('billing grace: the paid plan shown, daily limits floored to launch', async () => {
    const tenant = await t.addTenant('grace');
    await billingEntitlement(
      t.database.db,
      tenant.workspaceId,
      'deploy',
      { start: iso(-30 * DAY_MS), end: iso(-DAY_MS) },
      { status: 'past_due', graceUntil: iso(2 * DAY_MS) },
    );
    const res = await usage(tenant);
    const limits = { writes: 250, reads: 1000, embeds: 1250 };
    expect(res.body).toMatchObject({
      plan: 'deploy',
      entitlement_active: false,
      entitlement_source: 'billing',
      limits,
      caps: limits,
      operational_mode: 'normal',
      grace_soft_downgrade: true,
    });
  });

  it('no plan in force: sleep', async () => {
    const tenant = await t.addTenant('lapsed');
    await billingEntitlement(t.database.db, tenant.workspaceId, 'build', {
      start: iso(-40 * DAY_MS),
      end: iso(-10 * DAY_MS),
    });
    const res = await usage(tenant);
    expect(res.body).toMatchObject({
      plan: 'build',
      entitlement_active: false,
      entitlement_source: 'billing',
      operational_mode: 'sleep',
      grace_soft_downgrade: false,
    });
  });

  it('needs credentials', async () => {
    const res = await request(t.app).get('/v1/usage/today');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
  });

  it('with MNEMO_LIMITS=off reports consumption without limits or alerts', async () => {
    const off = await createTestApp({ MNEMO_LIMITS: 'off', MNEMO_INTERNAL_GRANT_PLAN: 'deploy' });
    try {
      const res = await usage(off.tenant, off.app);
      expect(res.status).toBe(200);
      expect(UsageResponse.strict().parse(res.body)).toEqual(res.body);
      expect(res.body).toEqual({
        plan: 'deploy',
        writes: 0,
        reads: 0,
        embeds: 0,
        day: today(),
        workspace_id: off.tenant.workspaceId,
        entitlement_active: true,
        entitlement_source: 'internal_grant',
        cap_alerts: [],
        operational_mode: 'normal',
        grace_soft_downgrade: false,
      });
      // Reading usage grants nothing when limits are off.
      expect(await getEntitlement(off.database.db, off.tenant.workspaceId)).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it('when the entitlement cannot be verified: degraded, with the last plan read or none', async () => {
    const db = t.database.db;
    const ws = await newWorkspace(db);
    let failing = false;
    const store = databaseEntitlements(db, 'build');
    const plans = new PlanService(db, {
      internalGrantPlan: 'build',
      cacheMs: 0,
      loader: async (workspaceId, now) => {
        if (failing) throw new Error('entitlement store unreachable');
        return store(workspaceId, now);
      },
    });
    const deps = { db, plans, limitsEnabled: true };
    expect((await usageToday(deps, ws)).operational_mode).toBe('normal');
    failing = true;
    const degraded = await usageToday(deps, ws);
    UsageResponse.parse(degraded);
    expect(degraded).toMatchObject({
      plan: 'build',
      operational_mode: 'degraded',
      limits: { writes: 1200, reads: 4000, embeds: 5200 },
    });
    const unknown = await usageToday(deps, await newWorkspace(db));
    UsageResponse.parse(unknown);
    expect(unknown).toMatchObject({
      plan: 'build',
      entitlement_active: false,
      operational_mode: 'degraded',
    });
    expect(unknown.limits).toBeUndefined();
  });
});

import { BillingHealth, CheckoutResponse, contract } from '@mnemo/contract';
import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { getEntitlement } from '../../src/db/queries/entitlements.js';
import { webhookEvents } from '../../src/db/schema/index.js';
import type { TestTenant } from '../support/app.js';
import { createTestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import {
  ADMIN_TOKEN,
  type BillingTestApp,
  createBillingTestApp,
  payAtProvider,
  postCallback,
} from './support.js';

describeDb('billing: deferred verification, reprocessing, degraded mode', () => {
  let t: BillingTestApp;
  beforeAll(async () => {
    t = await createBillingTestApp();
  }, 120_000);
  afterAll(async () => t?.close());
  afterEach(() => {
    t.payu.verifyMode = 'ok';
  });

  const buy = async (tenant: TestTenant, plan = 'build') => {
    const res = await request(t.app)
      .post('/v1/billing/checkout')
      .set('x-api-key', tenant.apiKey)
      .send({ plan });
    return payAtProvider(CheckoutResponse.parse(res.body));
  };
  const write = (tenant: TestTenant) =>
    request(t.app)
      .post('/v1/memories')
      .set('x-api-key', tenant.apiKey)
      .send({ text: 'Prefers morning calls.', user_id: 'u1' });
  const reprocess = () =>
    request(t.app).post(contract.admin.reprocessWebhooks.path).set('x-admin-token', ADMIN_TOKEN);
  const eventOf = async (txnid: string) =>
    (await t.database.db.select().from(webhookEvents).where(eq(webhookEvents.txnid, txnid)))[0];

  for (const mode of ['5xx', 'slow', 'malformed'] as const) {
    it(`defers the callback when the verification API is ${mode}, still answering 200`, async () => {
      const tenant = await t.addTenant(`deferred-${mode}`);
      const callback = await buy(tenant);
      t.payu.verifyMode = mode;
      t.payu.slowMs = 1_000;
      const res = await postCallback(t.app, callback);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, outcome: 'deferred' });
      const event = await eventOf(callback.txnid!);
      expect(event).toMatchObject({
        state: 'deferred',
        attempts: 1,
        workspaceId: tenant.workspaceId,
      });
      expect(event!.error).toBeTruthy();
      expect(event!.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
      expect(await getEntitlement(t.database.db, tenant.workspaceId)).toBeUndefined();
    });
  }

  it('answers writes 503 ENTITLEMENT_DEGRADED while a payment waits; reprocessing ends it', async () => {
    // Earlier tests left deferred events: clear them first.
    t.payu.verifyMode = 'ok';
    await reprocess();
    const tenant = await t.addTenant('paid-unverified');
    // Before paying: no plan in force.
    expect((await write(tenant)).status).toBe(402);

    const callback = await buy(tenant, 'deploy');
    t.payu.verifyMode = '5xx';
    expect((await postCallback(t.app, callback)).body.outcome).toBe('deferred');
    const degraded = await write(tenant);
    expect(degraded.status).toBe(503);
    expect(degraded.body.error.code).toBe('ENTITLEMENT_DEGRADED');
    expect(degraded.headers['retry-after']).toBeTruthy();
    // Reads keep working.
    expect(
      (await request(t.app).get('/v1/usage/today').set('x-api-key', tenant.apiKey)).status,
    ).toBe(200);

    const health = await request(t.app)
      .get(contract.admin.getBillingHealth.path)
      .set('x-admin-token', ADMIN_TOKEN);
    expect(health.status).toBe(200);
    expect(BillingHealth.parse(health.body)).toMatchObject({
      provider: 'payu',
      enabled: true,
      deferred_events: 1,
      provider_reachable: true,
    });
    expect(health.body.oldest_deferred_at).toBeTruthy();

    // Still down: reprocessing keeps it deferred, one more attempt counted.
    const again = await reprocess();
    expect(again.body).toEqual({ attempted: 1, processed: 0, deferred: 1, rejected: 0 });
    expect((await eventOf(callback.txnid!))!.attempts).toBe(2);

    t.payu.verifyMode = 'ok';
    const res = await reprocess();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ attempted: 1, processed: 1, deferred: 0, rejected: 0 });
    expect(await eventOf(callback.txnid!)).toMatchObject({ state: 'processed', attempts: 3 });
    expect((await getEntitlement(t.database.db, tenant.workspaceId))?.plan).toBe('deploy');
    expect((await write(tenant)).status).toBe(200);
    const usage = await request(t.app).get('/v1/usage/today').set('x-api-key', tenant.apiKey);
    expect(usage.body).toMatchObject({ plan: 'deploy', operational_mode: 'normal' });
    expect(usage.body.limits.writes).toBe(5_000);

    const after = await request(t.app)
      .get(contract.admin.getBillingHealth.path)
      .set('x-admin-token', ADMIN_TOKEN);
    expect(after.body.deferred_events).toBe(0);
    expect(after.body.last_successful_verification_at).toBeTruthy();
    // Nothing left: a second run does nothing, and a replay is a duplicate.
    expect((await reprocess()).body.attempted).toBe(0);
    expect((await postCallback(t.app, callback)).body.outcome).toBe('duplicate');
  });

  it('the scheduler path retries only due events', async () => {
    const tenant = await t.addTenant('scheduled');
    const callback = await buy(tenant, 'launch');
    t.payu.verifyMode = '5xx';
    await postCallback(t.app, callback);
    t.payu.verifyMode = 'ok';
    const billing = t.deps.billing;
    // Not due yet (backoff of at least 15 s).
    expect((await billing.reprocess()).attempted).toBe(0);
    await t.database.db
      .update(webhookEvents)
      .set({ nextAttemptAt: new Date(Date.now() - 1000) })
      .where(eq(webhookEvents.txnid, callback.txnid!));
    expect(await billing.reprocess()).toMatchObject({ attempted: 1, processed: 1 });
    expect((await getEntitlement(t.database.db, tenant.workspaceId))?.plan).toBe('launch');
  });

  it('reports an unreachable provider in the health view', async () => {
    await t.payu.stop();
    try {
      const res = await request(t.app)
        .get(contract.admin.getBillingHealth.path)
        .set('x-admin-token', ADMIN_TOKEN);
      expect(res.body).toMatchObject({ provider_reachable: false });
      expect(res.body.probe_error).toBeTruthy();
      expect((await request(t.app).get(contract.admin.getBillingHealth.path)).status).toBe(401);
    } finally {
      await t.payu.start();
    }
  });
});

describeDb('billing off (MNEMO_BILLING_PROVIDER=none)', () => {
  it('reports the internal grant, refuses checkout and callbacks with CONTROL_PLANE_ONLY', async () => {
    const t = await createTestApp({ MNEMO_LIMITS: 'on', MNEMO_ADMIN_TOKEN: ADMIN_TOKEN });
    try {
      const status = await request(t.app)
        .get('/v1/billing/status')
        .set('x-api-key', t.tenant.apiKey);
      expect(status.status).toBe(200);
      expect(status.body).toEqual({
        plan: 'team',
        plan_status: 'active',
        current_period_end: null,
        cancel_at_period_end: false,
        effective_plan: 'scale',
      });
      const checkout = await request(t.app)
        .post('/v1/billing/checkout')
        .set('x-api-key', t.tenant.apiKey)
        .send({ plan: 'build' });
      expect(checkout.status).toBe(403);
      expect(checkout.body.error.code).toBe('CONTROL_PLANE_ONLY');
      const callback = await request(t.app)
        .post('/v1/billing/webhook')
        .type('form')
        .send('txnid=x&status=success&amount=1');
      expect(callback.status).toBe(403);
      const health = await request(t.app)
        .get('/v1/admin/billing/health')
        .set('x-admin-token', ADMIN_TOKEN);
      expect(health.body).toMatchObject({
        provider: 'none',
        enabled: false,
        provider_reachable: null,
      });
      const reprocess = await request(t.app)
        .post('/admin/webhooks/reprocess')
        .set('x-admin-token', ADMIN_TOKEN);
      expect(reprocess.body).toEqual({ attempted: 0, processed: 0, deferred: 0, rejected: 0 });
    } finally {
      await t.close();
    }
  }, 120_000);
});

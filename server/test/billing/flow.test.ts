import { createHmac } from 'node:crypto';
import {
  BillingStatusResponse,
  CheckoutResponse,
  contract,
  PLANS,
  UsageResponse,
} from '@mnemo/contract';
import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getEntitlement } from '../../src/db/queries/entitlements.js';
import { billingTransactions, webhookEvents } from '../../src/db/schema/index.js';
import type { TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import {
  ADMIN_TOKEN,
  type BillingTestApp,
  createBillingTestApp,
  payAtProvider,
  postCallback,
  WEBHOOK_SECRET,
} from './support.js';

const DAY_MS = 86_400_000;

describeDb('billing: checkout → hosted form → callback → entitlement', () => {
  let t: BillingTestApp;
  beforeAll(async () => {
    t = await createBillingTestApp();
  }, 120_000);
  afterAll(async () => t?.close());

  const checkout = (tenant: TestTenant, body: Record<string, unknown>) =>
    request(t.app).post('/v1/billing/checkout').set('x-api-key', tenant.apiKey).send(body);
  const status = (tenant: TestTenant) =>
    request(t.app).get('/v1/billing/status').set('x-api-key', tenant.apiKey);
  const usage = (tenant: TestTenant) =>
    request(t.app).get('/v1/usage/today').set('x-api-key', tenant.apiKey);

  it('declares the routes in the contract with their auth', () => {
    expect(contract.billing.receivePaymentCallback.metadata).toEqual({ auth: 'payment_callback' });
    expect(contract.billing.createCheckout.path).toBe('/v1/billing/checkout');
    expect(contract.admin.reprocessWebhooks.path).toBe('/admin/webhooks/reprocess');
    expect(contract.admin.getBillingHealth.path).toBe('/v1/admin/billing/health');
  });

  it('needs an API key for status and checkout', async () => {
    expect((await request(t.app).get('/v1/billing/status')).status).toBe(401);
    expect((await request(t.app).post('/v1/billing/checkout').send({ plan: 'build' })).status).toBe(
      401,
    );
  });

  it('refuses an unknown plan with 400 and records nothing', async () => {
    const res = await checkout(t.tenant, { plan: 'enterprise' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(Object.keys(res.body.error.details)).toContain('plan');
    const rows = await t.database.db.select().from(billingTransactions);
    expect(rows).toHaveLength(0);
  });

  it('reports a workspace that never paid as having no plan', async () => {
    const res = await status(t.tenant);
    expect(res.status).toBe(200);
    expect(BillingStatusResponse.strict().parse(res.body)).toEqual({
      plan: 'pro',
      plan_status: 'none',
      current_period_end: null,
      cancel_at_period_end: false,
      effective_plan: 'launch',
    });
  });

  it('runs the whole flow; usage shows the new limits and status the plan', async () => {
    const tenant = await t.addTenant('buyer');
    // A client-sent amount is not part of the payload and never reaches the form.
    const res = await checkout(tenant, {
      plan: 'build',
      firstname: 'Asha',
      email: 'asha@example.com',
      phone: '+91 98765 43210',
    });
    expect(res.status).toBe(200);
    const form = CheckoutResponse.parse(res.body);
    expect(form.method).toBe('POST');
    expect(form.url).toBe(t.payu.formUrl);
    expect(form.fields).toMatchObject({
      key: 'fakekey',
      amount: '999.00',
      productinfo: 'build',
      firstname: 'Asha',
      email: 'asha@example.com',
      udf1: tenant.workspaceId,
      surl: 'https://console.example/billing/success',
      furl: 'https://console.example/billing/failure',
    });
    expect(form.fields.hash).toMatch(/^[0-9a-f]{128}$/);
    expect(form.fields).not.toHaveProperty('salt');
    const [row] = await t.database.db
      .select()
      .from(billingTransactions)
      .where(eq(billingTransactions.txnid, form.fields.txnid!));
    expect(row).toMatchObject({
      workspaceId: tenant.workspaceId,
      plan: 'build',
      amount: '999.00',
      state: 'created',
    });

    const callback = await payAtProvider(form);
    const before = Date.now();
    const answer = await postCallback(t.app, callback);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ received: true, outcome: 'processed' });

    const entitlement = await getEntitlement(t.database.db, tenant.workspaceId);
    expect(entitlement).toMatchObject({
      plan: 'build',
      status: 'active',
      entitlementSource: 'billing',
    });
    const length = entitlement!.periodEnd.getTime() - entitlement!.periodStart.getTime();
    expect(length).toBe(PLANS.build.periodDays * DAY_MS);
    expect(Math.abs(entitlement!.periodStart.getTime() - before)).toBeLessThan(10_000);

    const today = await usage(tenant);
    expect(today.status).toBe(200);
    const body = UsageResponse.parse(today.body);
    expect(body.plan).toBe('build');
    expect(body.entitlement_source).toBe('billing');
    expect(body.limits).toEqual({ writes: 1_200, reads: 4_000, embeds: 5_200 });

    const st = await status(tenant);
    expect(st.body).toEqual({
      plan: 'pro',
      plan_status: 'active',
      current_period_end: entitlement!.periodEnd.toISOString(),
      cancel_at_period_end: false,
      effective_plan: 'build',
    });
    const [paid] = await t.database.db
      .select()
      .from(billingTransactions)
      .where(eq(billingTransactions.txnid, form.fields.txnid!));
    expect(paid).toMatchObject({ state: 'paid', providerPaymentId: callback.mihpayid });
    const events = await t.database.db
      .select()
      .from(webhookEvents)
      .where(eq(webhookEvents.txnid, form.fields.txnid!));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      state: 'processed',
      attempts: 1,
      workspaceId: tenant.workspaceId,
    });
    expect(events[0]!.fields).not.toHaveProperty('hash');

    // A write now runs on the paid plan.
    const write = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', tenant.apiKey)
      .send({ text: 'The customer prefers email.', user_id: 'u1' });
    expect(write.status).toBe(200);
  });

  it('upgrades on a second purchase and maps scale to the legacy label team', async () => {
    const tenant = await t.addTenant('upgrader');
    for (const plan of ['launch', 'scale'] as const) {
      const form = CheckoutResponse.parse((await checkout(tenant, { plan })).body);
      expect(form.fields.amount).toBe(`${PLANS[plan].priceInr}.00`);
      const res = await postCallback(t.app, await payAtProvider(form));
      expect(res.body.outcome).toBe('processed');
    }
    const st = await status(tenant);
    expect(st.body).toMatchObject({ plan: 'team', effective_plan: 'scale', plan_status: 'active' });
    expect((await usage(tenant)).body.limits.writes).toBe(20_000);
  });

  it('records a failed payment without changing the entitlement', async () => {
    const tenant = await t.addTenant('declined');
    t.payu.paymentStatus = 'failure';
    try {
      const form = CheckoutResponse.parse((await checkout(tenant, { plan: 'deploy' })).body);
      const res = await postCallback(t.app, await payAtProvider(form));
      expect(res.body).toEqual({ received: true, outcome: 'processed' });
      const [row] = await t.database.db
        .select()
        .from(billingTransactions)
        .where(eq(billingTransactions.txnid, form.fields.txnid!));
      expect(row!.state).toBe('failed');
      expect(await getEntitlement(t.database.db, tenant.workspaceId)).toBeUndefined();
    } finally {
      t.payu.paymentStatus = 'success';
    }
  });

  it('accepts the fallback HMAC-SHA256 signature over the raw body', async () => {
    const tenant = await t.addTenant('hmac');
    const form = CheckoutResponse.parse((await checkout(tenant, { plan: 'launch' })).body);
    const { hash: _hash, ...fields } = await payAtProvider(form);
    const raw = new URLSearchParams(fields).toString();
    const signature = createHmac('sha256', WEBHOOK_SECRET).update(raw).digest('hex');
    const unsigned = await request(t.app).post('/v1/billing/webhook').type('form').send(raw);
    expect(unsigned.status).toBe(401);
    const res = await request(t.app)
      .post('/v1/billing/webhook')
      .type('form')
      .set('x-pay-webhook-signature', signature)
      .send(raw);
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('processed');
    expect((await getEntitlement(t.database.db, tenant.workspaceId))?.plan).toBe('launch');
  });

  it('answers the legacy portal with 410 GONE', async () => {
    const res = await request(t.app).post('/v1/billing/portal').set('x-api-key', t.tenant.apiKey);
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe('GONE');
    expect(res.body.request_id).toBeTruthy();
  });

  it('lets an operator cancel at period end: no grace, shown in the status', async () => {
    const tenant = await t.addTenant('canceller');
    const form = CheckoutResponse.parse((await checkout(tenant, { plan: 'build' })).body);
    await postCallback(t.app, await payAtProvider(form));
    const path = contract.admin.setCancelAtPeriodEnd.path;
    expect(
      (
        await request(t.app)
          .post(path)
          .send({ workspace_id: tenant.workspaceId, cancel_at_period_end: true })
      ).status,
    ).toBe(401);
    const res = await request(t.app)
      .post(path)
      .set('x-admin-token', ADMIN_TOKEN)
      .send({ workspace_id: tenant.workspaceId, cancel_at_period_end: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      cancel_at_period_end: true,
      plan_status: 'active',
      effective_plan: 'build',
    });
    expect((await getEntitlement(t.database.db, tenant.workspaceId))?.graceUntil).toBeNull();
    const undo = await request(t.app)
      .post(path)
      .set('x-admin-token', ADMIN_TOKEN)
      .send({ workspace_id: tenant.workspaceId, cancel_at_period_end: false });
    expect(undo.body.cancel_at_period_end).toBe(false);
    const entitlement = await getEntitlement(t.database.db, tenant.workspaceId);
    expect(entitlement!.graceUntil!.getTime() - entitlement!.periodEnd.getTime()).toBe(3 * DAY_MS);
  });
});

import { CheckoutResponse } from '@mnemo/contract';
import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import {
  billingTransactions,
  webhookEvents,
  workspaceEntitlements,
} from '../../src/db/schema/index.js';
import { payuResponseHash } from '../../src/providers/payments/payu.js';
import type { TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import {
  type BillingTestApp,
  createBillingTestApp,
  payAtProvider,
  postCallback,
} from './support.js';

/**
 * Every attack leaves the database as it was: the same entitlements, transactions and events
 * (a signed callback that does not match its transaction is recorded as rejected, nothing else).
 */
describeDb('billing callback security', () => {
  let t: BillingTestApp;
  let buyer: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    t = await createBillingTestApp({ MNEMO_MAX_BODY_BYTES: '4096' });
    buyer = await t.addTenant('buyer');
    other = await t.addTenant('other');
  }, 120_000);
  afterAll(async () => t?.close());
  beforeEach(() => {
    t.payu.chargeAmountOverride = undefined;
    t.payu.udf1Override = undefined;
    t.payu.verifyAmountOverride = undefined;
  });

  const snapshot = async () => ({
    entitlements: await t.database.db.select().from(workspaceEntitlements),
    transactions: await t.database.db.select().from(billingTransactions),
    events: await t.database.db.select().from(webhookEvents),
  });

  const checkout = async (tenant: TestTenant, plan = 'build') =>
    CheckoutResponse.parse(
      (
        await request(t.app)
          .post('/v1/billing/checkout')
          .set('x-api-key', tenant.apiKey)
          .send({ plan, email: 'a@example.com' })
      ).body,
    );

  it('refuses a forged hash with 401 and stores nothing', async () => {
    const callback = await payAtProvider(await checkout(buyer));
    const before = await snapshot();
    const forged = { ...callback, hash: payuResponseHash(callback, 'not-the-salt') };
    const res = await postCallback(t.app, forged);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    const missing = { ...callback };
    delete missing.hash;
    expect((await postCallback(t.app, missing)).status).toBe(401);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a tampered amount (the signature no longer matches) and stores nothing', async () => {
    const callback = await payAtProvider(await checkout(buyer, 'scale'));
    const before = await snapshot();
    const res = await postCallback(t.app, { ...callback, amount: '1.00' });
    expect(res.status).toBe(401);
    const plan = await postCallback(t.app, { ...callback, productinfo: 'launch' });
    expect(plan.status).toBe(401);
    expect(await snapshot()).toEqual(before);
  });

  it('rejects and records a signed callback whose amount differs from the transaction', async () => {
    const form = await checkout(buyer);
    t.payu.chargeAmountOverride = '1.00';
    const callback = await payAtProvider(form);
    const before = await snapshot();
    const res = await postCallback(t.app, callback);
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('rejected');
    const after = await snapshot();
    expect(after.entitlements).toEqual(before.entitlements);
    expect(after.transactions).toEqual(before.transactions);
    const [event] = after.events.filter((e) => e.txnid === form.fields.txnid);
    expect(event).toMatchObject({ state: 'rejected', workspaceId: buyer.workspaceId });
    expect(event!.error).toMatch(/amount/);
  });

  it("rejects when the provider's record disagrees with the transaction's amount", async () => {
    const form = await checkout(buyer);
    const callback = await payAtProvider(form);
    t.payu.verifyAmountOverride = '9.00';
    const before = await snapshot();
    const res = await postCallback(t.app, callback);
    expect(res.body.outcome).toBe('rejected');
    const after = await snapshot();
    expect(after.entitlements).toEqual(before.entitlements);
    expect(after.transactions).toEqual(before.transactions);
  });

  it('applies a replayed callback once: the duplicate changes nothing', async () => {
    const form = await checkout(buyer, 'deploy');
    const callback = await payAtProvider(form);
    expect((await postCallback(t.app, callback)).body.outcome).toBe('processed');
    const before = await snapshot();
    const calls = t.payu.verifyCalls;
    const replays = await Promise.all([1, 2, 3].map(() => postCallback(t.app, callback)));
    for (const res of replays) {
      expect(res.status).toBe(200);
      expect(res.body.outcome).toBe('duplicate');
    }
    expect(t.payu.verifyCalls).toBe(calls);
    expect(await snapshot()).toEqual(before);
  });

  it("changes only the transaction's own workspace, whoever sends the callback", async () => {
    const form = await checkout(buyer, 'launch');
    const callback = await payAtProvider(form);
    const otherBefore = await t.database.db
      .select()
      .from(workspaceEntitlements)
      .where(eq(workspaceEntitlements.workspaceId, other.workspaceId));
    // The other tenant posts the buyer's callback with its own key: the key is ignored.
    const res = await request(t.app)
      .post('/v1/billing/webhook')
      .set('x-api-key', other.apiKey)
      .type('form')
      .send(new URLSearchParams(callback).toString());
    expect(res.body.outcome).toBe('processed');
    const [mine] = await t.database.db
      .select()
      .from(workspaceEntitlements)
      .where(eq(workspaceEntitlements.workspaceId, buyer.workspaceId));
    expect(mine?.plan).toBe('launch');
    const otherAfter = await t.database.db
      .select()
      .from(workspaceEntitlements)
      .where(eq(workspaceEntitlements.workspaceId, other.workspaceId));
    expect(otherAfter).toEqual(otherBefore);
    expect(otherAfter).toEqual([]);
  });

  it("rejects a signed callback naming another workspace than its transaction's", async () => {
    const form = await checkout(buyer, 'scale');
    t.payu.udf1Override = other.workspaceId;
    const callback = await payAtProvider(form);
    const before = await snapshot();
    const res = await postCallback(t.app, callback);
    expect(res.body.outcome).toBe('rejected');
    const after = await snapshot();
    expect(after.entitlements).toEqual(before.entitlements);
    expect(after.transactions).toEqual(before.transactions);
  });

  it('rejects a callback for a transaction that does not exist', async () => {
    const fields: Record<string, string> = {
      key: t.payu.key,
      txnid: 'mnnosuchtransaction',
      amount: '999.00',
      productinfo: 'build',
      firstname: 'x',
      email: '',
      udf1: other.workspaceId,
      status: 'success',
      mihpayid: '1',
    };
    fields.hash = payuResponseHash(fields, t.payu.salt);
    const before = await snapshot();
    const res = await postCallback(t.app, fields);
    expect(res.body.outcome).toBe('rejected');
    expect((await snapshot()).entitlements).toEqual(before.entitlements);
  });

  it('refuses a body over the limit with 413, declared or chunked, and stores nothing', async () => {
    const callback = await payAtProvider(await checkout(other));
    const before = await snapshot();
    const big = { ...callback, padding: 'x'.repeat(8_000) };
    const res = await postCallback(t.app, big);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const body = new URLSearchParams(big).toString();
    const chunked = await fetchChunked(body);
    expect(chunked).toBe(413);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a JSON body: the callback is a form', async () => {
    const callback = await payAtProvider(await checkout(other));
    const before = await snapshot();
    const res = await request(t.app).post('/v1/billing/webhook').send(callback);
    expect(res.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  /** A body without Content-Length, so only the parser's limit can stop it. */
  async function fetchChunked(body: string): Promise<number> {
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    try {
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(body));
          controller.close();
        },
      });
      const res = await fetch(`http://127.0.0.1:${port}/v1/billing/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      await res.text();
      return res.status;
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
});

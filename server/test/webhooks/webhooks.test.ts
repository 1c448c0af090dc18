import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createDeps } from '../../src/deps.js';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import { createLogger } from '../../src/logger.js';
import { WebhookDispatcher } from '../../src/services/webhooks/dispatcher.js';
import { createTestApp, testConfig, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const WEBHOOK_ENV = {
  MNEMO_WEBHOOKS_ALLOW_PRIVATE: 'true',
  MNEMO_WEBHOOKS_DISPATCH_INTERVAL_MS: '0',
  MNEMO_WEBHOOKS_RETRY_BASE_MS: '10',
  MNEMO_WEBHOOKS_RETRY_MAX_MS: '40',
  MNEMO_WEBHOOKS_MAX_ATTEMPTS: '4',
  MNEMO_WEBHOOKS_TIMEOUT_MS: '2000',
};

describeDb('signed lifecycle webhooks', () => {
  let t: TestApp;
  let other: TestTenant;
  let dispatcher: WebhookDispatcher;
  const receiver = new WebhookReceiver();

  const as = (tenant: TestTenant) => ({ 'x-api-key': tenant.apiKey });
  const createEndpoint = (body: object, tenant: TestTenant = t.tenant) =>
    request(t.app).post('/v1/webhooks/endpoints').set(as(tenant)).send(body);
  const deliveries = (id: string, tenant: TestTenant = t.tenant) =>
    request(t.app).get(`/v1/webhooks/endpoints/${id}/deliveries`).set(as(tenant));
  const write = async (text: string, tenant: TestTenant = t.tenant): Promise<string> => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set(as(tenant))
      .send({ text, user_id: 'jane', extract: false });
    expect(res.status).toBe(200);
    return res.body.memory_id as string;
  };
  const remove = async (id: string) => {
    const res = await request(t.app).delete(`/v1/memories/${id}`).set(as(t.tenant));
    expect(res.status).toBe(200);
  };
  /** Runs the dispatcher until `done` holds (each pass sends everything then due). */
  const dispatchUntil = async (done: () => boolean, passes = 60) => {
    for (let pass = 0; pass < passes && !done(); pass++) {
      await dispatcher.tick();
      if (!done()) await new Promise((resolve) => setTimeout(resolve, 15));
    }
    expect(done(), 'the dispatcher did not get there').toBe(true);
  };

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp(WEBHOOK_ENV);
    other = await t.addTenant('other');
    dispatcher = new WebhookDispatcher({
      db: t.database.writer,
      secrets: t.deps.webhookSecrets,
      logger: t.deps.logger,
      config: t.deps.config.webhooks,
    });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await receiver.close();
  });

  it('creates, lists, updates, rotates and deletes endpoints; the secret is shown only once', async () => {
    const created = await createEndpoint({
      url: receiver.url('/crud'),
      description: 'CRM sync',
      event_types: ['memory.deleted'],
    });
    expect(created.status).toBe(201);
    const { endpoint, secret } = created.body as {
      endpoint: { id: string };
      secret: string;
    };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(created.body.endpoint).toMatchObject({
      url: receiver.url('/crud'),
      description: 'CRM sync',
      event_types: ['memory.deleted'],
      enabled: true,
    });
    // Stored sealed, never as it was shown.
    const [row] = await t.database.db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpoint.id));
    expect(row!.secretCiphertext).not.toContain(secret.slice(6));

    const listed = await request(t.app).get('/v1/webhooks/endpoints').set(as(t.tenant));
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(listed.body.results.map((e: { id: string }) => e.id)).toContain(endpoint.id);

    const patched = await request(t.app)
      .patch(`/v1/webhooks/endpoints/${endpoint.id}`)
      .set(as(t.tenant))
      .send({ enabled: false, event_types: [] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, event_types: [] });

    const rotated = await request(t.app)
      .post(`/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`)
      .set(as(t.tenant));
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret);

    const deleted = await request(t.app)
      .delete(`/v1/webhooks/endpoints/${endpoint.id}`)
      .set(as(t.tenant));
    expect(deleted.body).toEqual({ deleted: true });
    const gone = await request(t.app)
      .get(`/v1/webhooks/endpoints/${endpoint.id}`)
      .set(as(t.tenant));
    expect(gone.status).toBe(404);
  });

  it('refuses bad input with the error envelope', async () => {
    const notHttp = await createEndpoint({ url: 'ftp://example.com/hook' });
    expect(notHttp.status).toBe(400);
    expect(notHttp.body.error.code).toBe('BAD_REQUEST');
    const unknownType = await createEndpoint({
      url: receiver.url('/x'),
      event_types: ['memory.exploded'],
    });
    expect(unknownType.status).toBe(400);
    const credentials = await createEndpoint({ url: 'http://user:pw@127.0.0.1:9/x' });
    expect(credentials.status).toBe(400);
    const nowhere = await createEndpoint({ url: 'http://no-such-host.invalid/x' });
    expect(nowhere.status).toBe(400);
    expect(nowhere.body.error.details.url[0]).toMatch(/does not resolve/);
  });

  it('signs every delivery (Standard Webhooks) so that the receiver verifies it with its secret', async () => {
    const created = await createEndpoint({ url: receiver.url('/signed') });
    const secret = created.body.secret as string;
    const memoryId = await write('Jane prefers window seats on long flights');
    await dispatchUntil(() => receiver.on('/signed').length >= 1);

    const [hit] = receiver.on('/signed');
    const headers = {
      'webhook-id': String(hit!.headers['webhook-id']),
      'webhook-timestamp': String(hit!.headers['webhook-timestamp']),
      'webhook-signature': String(hit!.headers['webhook-signature']),
    };
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = new Webhook(secret).verify(hit!.body, headers) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    expect(payload).toMatchObject({
      type: 'memory.created',
      data: {
        event_id: headers['webhook-id'],
        workspace_id: t.tenant.workspaceId,
        memory_id: memoryId,
        rule: 'write',
      },
    });
    // The same bytes under another secret, or altered bytes, do not verify.
    expect(() =>
      new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(hit!.body, headers),
    ).toThrow();
    expect(() =>
      new Webhook(secret).verify(hit!.body.replace('write', 'wrote'), headers),
    ).toThrow();

    const log = await deliveries(created.body.endpoint.id);
    expect(log.status).toBe(200);
    expect(log.body.results[0]).toMatchObject({
      event_id: headers['webhook-id'],
      event_type: 'memory.created',
      memory_id: memoryId,
      status: 'succeeded',
      attempts: 1,
      response_status: 200,
      next_attempt_at: null,
    });
    await request(t.app)
      .delete(`/v1/webhooks/endpoints/${created.body.endpoint.id}`)
      .set(as(t.tenant));
  });

  it('retries after 500s with backoff, then succeeds, with the same webhook-id on every attempt', async () => {
    const created = await createEndpoint({ url: receiver.url('/flaky') });
    let failuresLeft = 2;
    receiver.respond = (hit) => (hit.path === '/flaky' && failuresLeft-- > 0 ? 500 : 200);
    await write('Jane is allergic to peanuts');
    await dispatchUntil(() => receiver.on('/flaky').some((hit) => hit.answered === 200));
    receiver.respond = () => 200;

    const hits = receiver.on('/flaky');
    expect(hits.map((hit) => hit.answered)).toEqual([500, 500, 200]);
    expect(new Set(hits.map((hit) => hit.headers['webhook-id'])).size).toBe(1);
    const log = await deliveries(created.body.endpoint.id);
    expect(log.body.results).toHaveLength(1);
    expect(log.body.results[0]).toMatchObject({
      status: 'succeeded',
      attempts: 3,
      response_status: 200,
      last_error: null,
    });
    await request(t.app)
      .delete(`/v1/webhooks/endpoints/${created.body.endpoint.id}`)
      .set(as(t.tenant));
  });

  it('gives up after the last attempt, and replay sends the same event again', async () => {
    const created = await createEndpoint({ url: receiver.url('/down') });
    const endpointId = created.body.endpoint.id as string;
    receiver.respond = (hit) => (hit.path === '/down' ? 503 : 200);
    await write('Jane flies out of Lisbon');
    await dispatchUntil(() => receiver.on('/down').length >= 4);
    await dispatcher.tick();
    expect(receiver.on('/down')).toHaveLength(4);
    const failed = (await deliveries(endpointId)).body.results[0];
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 4,
      response_status: 503,
      last_error: 'HTTP 503',
      next_attempt_at: null,
    });

    receiver.respond = () => 200;
    const replay = await request(t.app)
      .post(`/v1/webhooks/endpoints/${endpointId}/deliveries/${failed.id}/replay`)
      .set(as(t.tenant));
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ id: failed.id, status: 'pending', attempts: 0 });
    // Not finished yet: a second replay is a conflict.
    const again = await request(t.app)
      .post(`/v1/webhooks/endpoints/${endpointId}/deliveries/${failed.id}/replay`)
      .set(as(t.tenant));
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');

    await dispatchUntil(() => receiver.on('/down').some((hit) => hit.answered === 200));
    const hits = receiver.on('/down');
    expect(hits.at(-1)!.headers['webhook-id']).toBe(failed.event_id);
    expect((await deliveries(endpointId)).body.results[0]).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    await request(t.app).delete(`/v1/webhooks/endpoints/${endpointId}`).set(as(t.tenant));
  });

  it("delivers a memory's events in order: a later event waits while an earlier one is retried", async () => {
    const created = await createEndpoint({ url: receiver.url('/ordered') });
    const memoryId = await write('Jane moved to Porto in March');
    let createdFailures = 3;
    receiver.respond = (hit) =>
      hit.memoryId === memoryId && hit.type === 'memory.created' && createdFailures-- > 0
        ? 500
        : 200;
    // Both events are due at once: the deletion must wait for the creation's retries.
    await remove(memoryId);
    const unrelated = await write('Bob likes tea');
    await dispatchUntil(() =>
      receiver.on('/ordered').some((hit) => hit.type === 'memory.deleted' && hit.answered === 200),
    );
    receiver.respond = () => 200;

    const forMemory = receiver.on('/ordered').filter((hit) => hit.memoryId === memoryId);
    expect(forMemory.map((hit) => `${hit.type}:${hit.answered}`)).toEqual([
      'memory.created:500',
      'memory.created:500',
      'memory.created:500',
      'memory.created:200',
      'memory.deleted:200',
    ]);
    // Another memory's event was not held up by this one's retries.
    await dispatchUntil(() => receiver.on('/ordered').some((hit) => hit.memoryId === unrelated));
    await request(t.app)
      .delete(`/v1/webhooks/endpoints/${created.body.endpoint.id}`)
      .set(as(t.tenant));
  });

  it('sends each delivery once when several dispatchers run at the same time', async () => {
    const created = await createEndpoint({ url: receiver.url('/shared') });
    for (const text of ['One fact', 'Two facts', 'Three facts', 'Four facts', 'Five facts']) {
      await write(text);
    }
    const second = new WebhookDispatcher({
      db: t.database.writer,
      secrets: t.deps.webhookSecrets,
      logger: t.deps.logger,
      config: t.deps.config.webhooks,
    });
    await Promise.all([dispatcher.tick(), second.tick(), dispatcher.tick(), second.tick()]);
    await dispatchUntil(() => receiver.on('/shared').length >= 5);
    const ids = receiver.on('/shared').map((hit) => hit.headers['webhook-id']);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
    await request(t.app)
      .delete(`/v1/webhooks/endpoints/${created.body.endpoint.id}`)
      .set(as(t.tenant));
  });

  it('filters by event type, and a disabled endpoint gets nothing', async () => {
    const deletions = await createEndpoint({
      url: receiver.url('/deletions'),
      event_types: ['memory.deleted'],
    });
    const off = await createEndpoint({ url: receiver.url('/off') });
    await request(t.app)
      .patch(`/v1/webhooks/endpoints/${off.body.endpoint.id}`)
      .set(as(t.tenant))
      .send({ enabled: false });
    const memoryId = await write('Jane owns a red bicycle');
    await remove(memoryId);
    await dispatchUntil(() => receiver.on('/deletions').length >= 1);
    await dispatcher.tick();
    expect(receiver.on('/deletions').map((hit) => hit.type)).toEqual(['memory.deleted']);
    expect(receiver.on('/off')).toHaveLength(0);
    for (const id of [deletions.body.endpoint.id, off.body.endpoint.id]) {
      await request(t.app).delete(`/v1/webhooks/endpoints/${id}`).set(as(t.tenant));
    }
  });

  it('after a rotation signs with both secrets, so either verifies', async () => {
    const created = await createEndpoint({ url: receiver.url('/rotated') });
    const rotated = await request(t.app)
      .post(`/v1/webhooks/endpoints/${created.body.endpoint.id}/rotate-secret`)
      .set(as(t.tenant));
    await write('Jane speaks Portuguese');
    await dispatchUntil(() => receiver.on('/rotated').length >= 1);
    const [hit] = receiver.on('/rotated');
    const headers = {
      'webhook-id': String(hit!.headers['webhook-id']),
      'webhook-timestamp': String(hit!.headers['webhook-timestamp']),
      'webhook-signature': String(hit!.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(rotated.body.secret).verify(hit!.body, headers)).not.toThrow();
    expect(() => new Webhook(created.body.secret).verify(hit!.body, headers)).not.toThrow();
    await request(t.app)
      .delete(`/v1/webhooks/endpoints/${created.body.endpoint.id}`)
      .set(as(t.tenant));
  });

  it("keeps workspaces apart: another workspace's endpoint ids behave as missing, its events never cross", async () => {
    const mine = await createEndpoint({ url: receiver.url('/mine') });
    const id = mine.body.endpoint.id as string;
    await write('Jane collects stamps');
    await dispatchUntil(() => receiver.on('/mine').length >= 1);
    const deliveryId = (await deliveries(id)).body.results[0].id as string;

    const foreign = [
      request(t.app).get(`/v1/webhooks/endpoints/${id}`),
      request(t.app).patch(`/v1/webhooks/endpoints/${id}`).send({ enabled: false }),
      request(t.app).delete(`/v1/webhooks/endpoints/${id}`),
      request(t.app).post(`/v1/webhooks/endpoints/${id}/rotate-secret`),
      request(t.app).get(`/v1/webhooks/endpoints/${id}/deliveries`),
      request(t.app).post(`/v1/webhooks/endpoints/${id}/deliveries/${deliveryId}/replay`),
    ];
    for (const req of foreign) {
      const res = await req.set(as(other));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const theirs = await request(t.app).get('/v1/webhooks/endpoints').set(as(other));
    expect(theirs.body.results).toEqual([]);
    const notUuid = await request(t.app).get('/v1/webhooks/endpoints/not-an-id').set(as(t.tenant));
    expect(notUuid.status).toBe(404);

    // The other workspace's writes reach neither this endpoint nor its log.
    const before = receiver.on('/mine').length;
    await write('Someone else entirely', other);
    await dispatcher.tick();
    expect(receiver.on('/mine')).toHaveLength(before);
    expect((await deliveries(id)).body.total).toBe(1);
    await request(t.app).delete(`/v1/webhooks/endpoints/${id}`).set(as(t.tenant));
  });

  describe('with private addresses not allowed (the default)', () => {
    let strict: ReturnType<typeof createApp>;
    let strictDispatcher: WebhookDispatcher;

    beforeAll(async () => {
      const config = testConfig({ ...WEBHOOK_ENV, MNEMO_WEBHOOKS_ALLOW_PRIVATE: 'false' });
      const deps = await createDeps(config, createLogger('silent'), t.database);
      strict = createApp(deps);
      strictDispatcher = new WebhookDispatcher({
        db: t.database.writer,
        secrets: deps.webhookSecrets,
        logger: deps.logger,
        config: config.webhooks,
      });
    });

    it.each([
      ['loopback', 'http://127.0.0.1:8080/hook'],
      ['localhost by name', 'http://localhost/hook'],
      ['IPv6 loopback', 'http://[::1]/hook'],
      ['private', 'http://10.1.2.3/hook'],
      ['cloud metadata', 'http://169.254.169.254/latest/meta-data'],
      ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook'],
    ])('refuses a %s URL', async (_, url) => {
      const res = await request(strict)
        .post('/v1/webhooks/endpoints')
        .set(as(t.tenant))
        .send({ url });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
      expect(res.body.error.details.url[0]).toMatch(/non-public address/);
    });

    it('re-checks at delivery time: an endpoint that now resolves inward gets nothing', async () => {
      // Stored while allowed (as a host that re-resolves inward after validation would be).
      const byName = await createEndpoint({
        url: receiver.url('/rebound').replace('127.0.0.1', 'localhost'),
      });
      const byAddress = await createEndpoint({ url: receiver.url('/rebound-ip') });
      await write('Jane walks to work');
      await strictDispatcher.tick();
      expect(receiver.on('/rebound')).toHaveLength(0);
      expect(receiver.on('/rebound-ip')).toHaveLength(0);
      for (const endpoint of [byName.body.endpoint, byAddress.body.endpoint]) {
        const [delivery] = (await deliveries(endpoint.id)).body.results;
        expect(delivery.attempts).toBeGreaterThanOrEqual(1);
        expect(delivery.response_status).toBeNull();
        expect(delivery.last_error).toMatch(/refused.*loopback/);
        await request(t.app).delete(`/v1/webhooks/endpoints/${endpoint.id}`).set(as(t.tenant));
      }
    });
  });
});

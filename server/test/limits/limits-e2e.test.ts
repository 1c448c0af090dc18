import request from 'supertest';
import { afterEach, expect, it, vi } from 'vitest';
import type { EmbeddingProvider } from '../../src/providers/embeddings/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { ACCEPT, INITIALIZE } from '../mcp/support.js';
import { setUsed } from '../usage/support.js';

/** The spec's envelope of a refused request, with its headers. */
function expectRefused(res: request.Response, status: number, code: string, message: RegExp): void {
  expect(res.status).toBe(status);
  const { details, ...error } = res.body.error as { details?: Record<string, string[]> };
  expect({ ...res.body, error }).toEqual({
    error: { code, message: expect.stringMatching(message) },
    request_id: res.headers['x-request-id'],
  });
  // Only caps name the resources over their limit.
  if (code === 'CAP_EXCEEDED') expect(Object.keys(details ?? {}).length).toBeGreaterThan(0);
  else expect(details).toBeUndefined();
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

async function memoryCount(t: TestApp, tenant: TestTenant = t.tenant): Promise<number> {
  const res = await request(t.app)
    .get('/v1/memories')
    .query({ all_owners: 'true' })
    .set('x-api-key', tenant.apiKey);
  return res.body.total as number;
}

const write = (t: TestApp, text: string, tenant: TestTenant = t.tenant) =>
  request(t.app)
    .post('/v1/memories')
    .set('x-api-key', tenant.apiKey)
    .send({ text, user_id: 'u1', extract: false });

const search = (t: TestApp, body: Record<string, unknown>, tenant: TestTenant = t.tenant) =>
  request(t.app)
    .post('/v1/search')
    .set('x-api-key', tenant.apiKey)
    .send({ user_id: 'u1', ...body });

describeDb('request limits end to end', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.mcpSessions.closeAll();
    await t?.close();
    t = undefined;
  });

  it('per key: past the key rate, 429 RATE_LIMITED with the RateLimit headers; nothing written', async () => {
    t = await createTestApp({ MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '3' });
    for (let i = 0; i < 3; i++) {
      const ok = await write(t, `note number ${i}`);
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit-policy']).toMatch(/^"key";q=3;w=60, "workspace";q=\d+;w=60$/);
      // The window opened at the first write: a slow run may see a second of it gone.
      expect(ok.headers['ratelimit']).toMatch(new RegExp(`^"key";r=${2 - i};t=(59|60)$`));
    }
    const refused = await write(t, 'one note too many');
    expectRefused(refused, 429, 'RATE_LIMITED', /3 requests per minute per API key/);
    expect(refused.headers['ratelimit']).toMatch(/^"key";r=0;t=\d+$/);

    // Another key of the same workspace has a rate of its own.
    const other = await t.deps.apiKeys.mint(t.tenant.workspaceId, 'second');
    const tenant2 = { workspaceId: t.tenant.workspaceId, apiKey: other.plaintext };
    expect(await memoryCount(t, tenant2)).toBe(3);
  });

  it('the MCP door counts against the same key rate as REST', async () => {
    t = await createTestApp({ MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '2' });
    const mcp = () =>
      request(t!.app)
        .post('/mcp')
        .set('x-api-key', t!.tenant.apiKey)
        .set('accept', ACCEPT)
        .send(INITIALIZE);
    expect((await write(t, 'one REST write')).status).toBe(200);
    expect((await mcp()).status).toBe(200);
    const refused = await mcp();
    expectRefused(refused, 429, 'RATE_LIMITED', /2 requests per minute per API key/);
  });

  it('dashboard routes are limited per client address, in the dashboard envelope', async () => {
    t = await createTestApp({ MNEMO_DASHBOARD_RATE_LIMIT_PER_MINUTE: '2' });
    const bootstrap = () =>
      request(t!.app).post('/v1/dashboard/bootstrap').send({ access_token: 'not-a-jwt' });
    expect((await bootstrap()).status).toBe(401);
    expect((await bootstrap()).status).toBe(401);
    const refused = await bootstrap();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({
      ok: false,
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringMatching(/2 dashboard requests per minute per client address/),
      },
    });
  });

  it('keys minted by the operator key route start at 15 requests per minute', async () => {
    t = await createTestApp({ MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '60' });
    const minted = await t.deps.apiKeys.mint(t.tenant.workspaceId, 'operator', {
      introductory: true,
    });
    const tenant = { workspaceId: t.tenant.workspaceId, apiKey: minted.plaintext };
    for (let i = 0; i < 15; i++) {
      expect(
        (await request(t.app).get('/v1/memories').set('x-api-key', minted.plaintext)).status,
      ).toBe(200);
    }
    const refused = await request(t.app).get('/v1/memories').set('x-api-key', tenant.apiKey);
    expectRefused(refused, 429, 'RATE_LIMITED', /15 requests per minute per API key/);
    // The workspace's ordinary key is not held back.
    expect(
      (await request(t.app).get('/v1/memories').set('x-api-key', t.tenant.apiKey)).status,
    ).toBe(200);
  });

  it('per workspace: every key of the workspace counts toward one rate', async () => {
    t = await createTestApp({
      MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '100',
      MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '4',
    });
    const second = await t.deps.apiKeys.mint(t.tenant.workspaceId, 'second');
    const keys = [t.tenant.apiKey, second.plaintext];
    for (let i = 0; i < 4; i++) {
      expect(
        (await write(t, `shared rate ${i}`, { ...t.tenant, apiKey: keys[i % 2]! })).status,
      ).toBe(200);
    }
    const refused = await write(t, 'over the workspace rate', { ...t.tenant, apiKey: keys[0]! });
    expectRefused(refused, 429, 'RATE_LIMITED', /4 requests per minute per workspace/);
    expect(refused.headers['ratelimit']).toMatch(/^"workspace";r=0;t=\d+$/);
    // Another workspace is untouched.
    const neighbour = await t.addTenant('neighbour');
    expect((await write(t, 'neighbour writes', neighbour)).status).toBe(200);
  });

  it('a request refused for its key does not count toward the workspace rate', async () => {
    t = await createTestApp({
      MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '2',
      MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '4',
    });
    for (let i = 0; i < 2; i++) expect((await write(t, `first key ${i}`)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      expectRefused(await write(t, `over the key ${i}`), 429, 'RATE_LIMITED', /per API key/);
    }
    // The workspace has counted 2 of its 4: a second key still gets its 2.
    const second = await t.deps.apiKeys.mint(t.tenant.workspaceId, 'second');
    const tenant2 = { ...t.tenant, apiKey: second.plaintext };
    for (let i = 0; i < 2; i++)
      expect((await write(t, `second key ${i}`, tenant2)).status).toBe(200);
    // Now it has counted 4: a third key is refused for the workspace.
    const third = await t.deps.apiKeys.mint(t.tenant.workspaceId, 'third');
    expectRefused(
      await write(t, 'third key', { ...t.tenant, apiKey: third.plaintext }),
      429,
      'RATE_LIMITED',
      /per workspace/,
    );
  });

  it('the plan sets the workspace rate when no override is configured (scale: 300)', async () => {
    t = await createTestApp({
      MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '100',
      MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '',
      MNEMO_INTERNAL_GRANT_PLAN: 'scale',
    });
    const res = await request(t.app).get('/v1/memories').set('x-api-key', t.tenant.apiKey);
    expect(res.headers['ratelimit-policy']).toBe('"key";q=100;w=60, "workspace";q=300;w=60');
  });

  it('in flight: 8 leases per workspace by default; a crashed request’s lease expires', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    t = await createTestApp({ MNEMO_INFLIGHT_PER_WORKSPACE: '2', MNEMO_INFLIGHT_LEASE_MS: '1000' });
    const local = t.deps.embeddings;
    const embed = local.embed.bind(local);
    // The app's own embedder, but holding every write until the test lets go.
    vi.spyOn(local, 'embed').mockImplementation(
      async (...args: Parameters<EmbeddingProvider['embed']>) => {
        await gate;
        return embed(...args);
      },
    );
    const held = [write(t, 'held write one'), write(t, 'held write two')].map((r) =>
      r.then((res) => res),
    );
    // Let both reach the embedder while holding their leases.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await request(t.app).get('/v1/memories').set('x-api-key', t.tenant.apiKey);
    expectRefused(refused, 429, 'RATE_LIMITED', /2 at a time per workspace/);
    release();
    expect((await Promise.all(held)).map((res) => res.status)).toEqual([200, 200]);
    // Leases came back with the responses.
    expect(
      (await request(t.app).get('/v1/memories').set('x-api-key', t.tenant.apiKey)).status,
    ).toBe(200);

    // Two leases taken and never returned (a crashed process): refused until they expire.
    await t.deps.limits.leases.acquire(`inflight:${t.tenant.workspaceId}`, 2, 1000);
    await t.deps.limits.leases.acquire(`inflight:${t.tenant.workspaceId}`, 2, 1000);
    expect(
      (await request(t.app).get('/v1/memories').set('x-api-key', t.tenant.apiKey)).status,
    ).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(
      (await request(t.app).get('/v1/memories').set('x-api-key', t.tenant.apiKey)).status,
    ).toBe(200);
  });

  it('daily cap: reads at the plan’s cap refuse searches with CAP_EXCEEDED until the day turns', async () => {
    t = await createTestApp();
    expect((await write(t, 'Jane likes green tea')).status).toBe(200);
    const cap = await setUsed(t, t.tenant.workspaceId, 'reads', 0);
    await setUsed(t, t.tenant.workspaceId, 'reads', cap - 1);
    expect((await search(t, { query: 'green tea' })).status).toBe(200);
    const refused = await search(t, { query: 'green tea' }).set('x-request-id', 'refused-read-1');
    expectRefused(refused, 429, 'CAP_EXCEEDED', /reads/);
    expect(Object.keys(refused.body.error.details)).toContain('reads');
    // The refused search ran beside its reservation but left no trace: no signal to rate.
    await t.deps.background.drain();
    const feedback = await request(t.app)
      .post('/v1/feedback')
      .set('x-api-key', t.tenant.apiKey)
      .send({ feedback: 'positive', request_id: 'refused-read-1' });
    expect(feedback.status).toBe(404);
    // The reset is the next UTC midnight.
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(86_400);
    const context = await request(t.app)
      .post('/v1/context')
      .set('x-api-key', t.tenant.apiKey)
      .send({ query: 'green tea', user_id: 'u1' });
    expect(context.status).toBe(429);
    expect(context.body.error.code).toBe('CAP_EXCEEDED');
  });

  it('period cap: embed tokens spent for the period refuse hybrid search; keyword search runs', async () => {
    t = await createTestApp();
    expect((await write(t, 'Jane likes green tea')).status).toBe(200);
    const cap = await setUsed(t, t.tenant.workspaceId, 'embed_tokens', 0);
    await setUsed(t, t.tenant.workspaceId, 'embed_tokens', cap);
    const refused = await search(t, { query: 'green tea' });
    expectRefused(refused, 429, 'CAP_EXCEEDED', /embed_tokens|embed tokens/);
    expect(Object.keys(refused.body.error.details)).toContain('embed_tokens');
    const keyword = await search(t, { query: 'green tea', search_mode: 'keyword' });
    expect(keyword.status).toBe(200);
    expect(keyword.body.results.length).toBeGreaterThan(0);
  });

  it('cost burst: past 15 INR a minute of AI cost, writes are refused and nothing is written', async () => {
    // 1 INR per token makes the cost of a short text easy to count: ~10 tokens → ~10 INR.
    t = await createTestApp({ MNEMO_EMBED_COST_INR_PER_1M_TOKENS: '1000000' });
    const text = 'a'.repeat(40);
    expect((await write(t, text)).status).toBe(200);
    const refused = await write(t, 'b'.repeat(40));
    expectRefused(refused, 429, 'RATE_LIMITED', /AI cost burst exceeded: 15 INR per minute/);
    expect(await memoryCount(t)).toBe(1);
    // Reads that cost nothing are not held back by the burst.
    expect((await search(t, { query: 'aaaa', search_mode: 'keyword' })).status).toBe(200);
  });

  it('global AI budget: once the day’s budget is spent, AI-cost requests get COST_BUDGET_EXCEEDED', async () => {
    t = await createTestApp({
      MNEMO_EMBED_COST_INR_PER_1M_TOKENS: '1000000',
      MNEMO_COST_BURST_INR_PER_MINUTE: '1000',
      MNEMO_AI_BUDGET_INR_PER_DAY: '25',
    });
    const other = await t.addTenant('other');
    expect((await write(t, 'a'.repeat(40))).status).toBe(200);
    expect((await write(t, 'b'.repeat(40), other)).status).toBe(200);
    // The budget is the installation's: a third workspace write would pass it.
    const refused = await write(t, 'c'.repeat(40), other);
    expectRefused(refused, 429, 'COST_BUDGET_EXCEEDED', /daily AI cost budget \(25 INR\) is spent/);
    expect(await memoryCount(t, other)).toBe(1);
  });

  it('global AI budget fails closed in production when its store cannot be read', async () => {
    const down = {
      MNEMO_EMBED_COST_INR_PER_1M_TOKENS: '1000000',
      MNEMO_AI_BUDGET_INR_PER_DAY: '25',
      REDIS_URL: 'redis://127.0.0.1:1',
    };
    t = await createTestApp({ ...down, MNEMO_STAGE: 'production' });
    const refused = await write(t, 'a'.repeat(40));
    expectRefused(refused, 429, 'COST_BUDGET_EXCEEDED', /cannot be verified/);
    expect(await memoryCount(t)).toBe(0);
    await t.close();
    // Elsewhere an unreachable limit store lets requests through.
    t = await createTestApp(down);
    expect((await write(t, 'a'.repeat(40))).status).toBe(200);
    // Two apps, each waiting out an unreachable Redis: ~16 s alone, more on a busy machine.
  }, 90_000);

  it('MNEMO_LIMITS=off: no rate headers, no caps', async () => {
    t = await createTestApp({ MNEMO_LIMITS: 'off', MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '1' });
    for (let i = 0; i < 3; i++) {
      const res = await write(t, `unlimited ${i}`);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
  });
});

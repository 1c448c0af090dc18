import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UsageResource } from '@mnemo/contract';
import { count, eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { memories, memoryChunks, usageCounters } from '../../src/db/schema/index.js';
import { EmbeddingError } from '../../src/providers/embeddings/index.js';
import { estimateExtractionTokens, estimateTokens } from '../../src/services/ai-cost.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { billingEntitlement, meter, setUsed } from './support.js';

const PARAGRAPH =
  'I moved to Berlin last month and started working at Siemens as an engineer. I love hiking and my favourite food is ramen. I need to renew my passport before June.';

/** The spec's envelope of a refused request. */
function expectRefused(res: request.Response, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({
    error: {
      code,
      message: expect.any(String),
      ...(code === 'CAP_EXCEEDED' ? { details: expect.any(Object) } : {}),
    },
    request_id: res.headers['x-request-id'],
  });
}

/**
 * Every usage counter of a workspace, by resource (one window per resource in these tests),
 * after usage blocks held in memory are settled.
 */
async function counters(
  t: TestApp,
  workspaceId: string,
): Promise<Record<string, { used: number; reserved: number }>> {
  await t.deps.quota.drain?.();
  const rows = await t.database.db
    .select()
    .from(usageCounters)
    .where(eq(usageCounters.workspaceId, workspaceId));
  return Object.fromEntries(
    rows.map((row) => [row.resource, { used: Number(row.used), reserved: Number(row.reserved) }]),
  );
}

/** Nothing is held: every reservation of the workspace was committed or released. */
async function expectNothingReserved(t: TestApp, workspaceId: string): Promise<void> {
  const all = await counters(t, workspaceId);
  expect(Object.values(all).every((c) => c.reserved === 0)).toBe(true);
}

const usedOf = async (t: TestApp, workspaceId: string, resource: string) =>
  (await counters(t, workspaceId))[resource]?.used ?? 0;

async function memoryCount(t: TestApp, workspaceId: string): Promise<number> {
  const [row] = await t.database.db
    .select({ n: count() })
    .from(memories)
    .where(eq(memories.workspaceId, workspaceId));
  return Number(row?.n ?? 0);
}

/** Puts a resource at its cap (`less` below it). */
async function atCap(t: TestApp, workspaceId: string, resource: UsageResource, less = 0) {
  const plan = await t.deps.plans.resolve(workspaceId);
  const cap = plan.caps[resource];
  await setUsed(t, workspaceId, resource, cap - less);
  return cap;
}

const writeTo = (t: TestApp, tenant: TestTenant, body: object) =>
  request(t.app)
    .post('/v1/memories')
    .set('x-api-key', tenant.apiKey)
    .send({ user_id: 'u1', ...body });

const searchIn = (t: TestApp, tenant: TestTenant, body: object) =>
  request(t.app)
    .post('/v1/search')
    .set('x-api-key', tenant.apiKey)
    .send({ user_id: 'u1', ...body });

describeDb('write path budget outcomes (local embedder and extractor)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_LIMITS: 'on' });
  });
  afterAll(async () => t?.close());
  afterEach(() => vi.restoreAllMocks());

  const write = (tenant: TestTenant, body: object) => writeTo(t, tenant, body);

  it('under the caps: the answer is unchanged and every part is committed as consumed', async () => {
    const tenant = await t.addTenant('under');
    const text = 'Alice prefers oat milk in her coffee';
    const res = await write(tenant, { text });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stored: true, extraction: { status: 'run' }, chunks: 1 });
    expect(res.body).not.toHaveProperty('embedding');
    expect(await counters(t, tenant.workspaceId)).toEqual({
      writes: { used: 1, reserved: 0 },
      storage: { used: Buffer.byteLength(text), reserved: 0 },
      embeds: { used: 1, reserved: 0 },
      embed_tokens: { used: estimateTokens(text), reserved: 0 },
      // The local extractor is rules: a call, no generation tokens (no counter at all).
      extraction_calls: { used: 1, reserved: 0 },
    });

    // Children embedded count toward embeds: every chunk stored was embedded once.
    const paragraph = await write(tenant, { text: PARAGRAPH, user_id: 'ana' });
    expect(paragraph.body.extraction).toEqual({ status: 'run' });
    const chunks = await t.database.db
      .select({ text: memoryChunks.text })
      .from(memoryChunks)
      .where(eq(memoryChunks.workspaceId, tenant.workspaceId));
    expect(chunks.length).toBeGreaterThan(2);
    const after = await counters(t, tenant.workspaceId);
    expect(after.embeds).toEqual({ used: chunks.length, reserved: 0 });
    expect(after.embed_tokens?.used).toBe(
      chunks.reduce((sum, chunk) => sum + estimateTokens(chunk.text), 0),
    );
    expect(after.extraction_calls).toEqual({ used: 2, reserved: 0 });
    // Stored bytes are the parents' texts (children go with their parent when it is deleted).
    expect(after.storage?.used).toBe(Buffer.byteLength(text) + Buffer.byteLength(PARAGRAPH));

    // A duplicate stores nothing and consumes nothing.
    const again = await write(tenant, { text });
    expect(again.body.deduped).toBe(true);
    expect(await counters(t, tenant.workspaceId)).toEqual(after);
  });

  it('over the writes cap: 429 CAP_EXCEEDED with Retry-After, nothing written', async () => {
    const tenant = await t.addTenant('writes');
    await atCap(t, tenant.workspaceId, 'writes');
    const res = await write(tenant, { text: 'Bob drinks his coffee black' });
    expectRefused(res, 429, 'CAP_EXCEEDED');
    expect(Object.keys(res.body.error.details)).toEqual(['writes']);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(86_400);
    expect(await memoryCount(t, tenant.workspaceId)).toBe(0);
    await expectNothingReserved(t, tenant.workspaceId);
    // The embedding budget spent as well changes nothing: the write itself is refused.
    await atCap(t, tenant.workspaceId, 'embeds');
    expectRefused(await write(tenant, { text: 'Bob drinks tea' }), 429, 'CAP_EXCEEDED');
    expect(await memoryCount(t, tenant.workspaceId)).toBe(0);
  });

  it('over the storage cap: 429 CAP_EXCEEDED counted in UTF-8 bytes, no Retry-After', async () => {
    const tenant = await t.addTenant('storage');
    const text = 'Crème brûlée at Café Zoë'; // 24 characters, 29 bytes
    const bytes = Buffer.byteLength(text);
    expect(bytes).toBeGreaterThan(text.length);
    const cap = await atCap(t, tenant.workspaceId, 'storage', bytes - 1);
    const refused = await write(tenant, { text });
    expectRefused(refused, 429, 'CAP_EXCEEDED');
    expect(Object.keys(refused.body.error.details)).toEqual(['storage']);
    // Stored bytes never reset by themselves: waiting does not help.
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(await memoryCount(t, tenant.workspaceId)).toBe(0);
    await expectNothingReserved(t, tenant.workspaceId);

    await setUsed(t, tenant.workspaceId, 'storage', cap - bytes);
    expect((await write(tenant, { text })).status).toBe(200);
    expect(await usedOf(t, tenant.workspaceId, 'storage')).toBe(cap);
  });

  it('over the embeds cap: stored without embeddings, found by keyword search, not by vector search', async () => {
    const tenant = await t.addTenant('embeds');
    const embedsCap = await atCap(t, tenant.workspaceId, 'embeds');
    const text = 'Carla keeps her spare keys under the blue flowerpot';
    const res = await write(tenant, { text });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      memory_id: expect.any(String),
      stored: true,
      extraction: { status: 'run' },
      embedding: 'skipped_due_to_budget',
      intelligence: expect.any(Object),
    });
    const stored = await request(t.app)
      .get(`/v1/memories/${res.body.memory_id}`)
      .set('x-api-key', tenant.apiKey);
    expect(stored.body).toMatchObject({ text, chunks: 1 });
    const [chunk] = await t.database.db
      .select()
      .from(memoryChunks)
      .where(eq(memoryChunks.memoryId, res.body.memory_id));
    // No vector, and no embedder named: vector search selects chunks by dimension.
    expect(chunk).toMatchObject({
      text,
      embedding: null,
      embeddingProvider: null,
      embeddingDimension: null,
      embeddingVersion: null,
    });

    const counted = await counters(t, tenant.workspaceId);
    expect(counted.writes).toEqual({ used: 1, reserved: 0 });
    expect(counted.embeds).toEqual({ used: embedsCap, reserved: 0 });
    expect(counted.embed_tokens?.used ?? 0).toBe(0);

    const keyword = await searchIn(t, tenant, {
      query: 'spare keys flowerpot',
      search_mode: 'keyword',
    });
    expect(keyword.status).toBe(200);
    expect(keyword.body.results.map((r: { memory_id: string }) => r.memory_id)).toEqual([
      res.body.memory_id,
    ]);
    // With embeds available again, vector search embeds the query and does not meet the chunk.
    await setUsed(t, tenant.workspaceId, 'embeds', 0);
    const vector = await searchIn(t, tenant, {
      query: 'spare keys under the blue flowerpot',
      search_mode: 'vector',
    });
    expect(vector.status).toBe(200);
    expect(vector.body.results).toEqual([]);
  });

  it('over the embeds cap: exact duplicates still dedupe; children are stored without vectors too', async () => {
    const tenant = await t.addTenant('embeds-children');
    await atCap(t, tenant.workspaceId, 'embed_tokens');
    const first = await write(tenant, { text: PARAGRAPH });
    expect(first.body).toMatchObject({
      extraction: { status: 'run' },
      embedding: 'skipped_due_to_budget',
    });
    expect(first.body).not.toHaveProperty('chunks');
    const chunks = await t.database.db
      .select({ embedding: memoryChunks.embedding, dimension: memoryChunks.embeddingDimension })
      .from(memoryChunks)
      .where(eq(memoryChunks.workspaceId, tenant.workspaceId));
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((c) => c.embedding === null && c.dimension === null)).toBe(true);

    const again = await write(tenant, { text: PARAGRAPH });
    expect(again.body).toMatchObject({ memory_id: first.body.memory_id, deduped: true });
    const counted = await counters(t, tenant.workspaceId);
    expect(counted.writes).toEqual({ used: 1, reserved: 0 });
    expect(counted.embeds?.used ?? 0).toBe(0);
    await expectNothingReserved(t, tenant.workspaceId);

    // The answer is replayed as it was under the same idempotency key.
    const keyed = { text: 'Dario parks on level 3', idempotency_key: 'budget-key-0001' };
    const once = await write(tenant, keyed);
    const twice = await write(tenant, keyed);
    expect(twice.body).toEqual(once.body);
    expect(once.body.embedding).toBe('skipped_due_to_budget');
  });

  it('over the extraction calls cap: extraction skipped for plan_limit; other reasons keep their place', async () => {
    const tenant = await t.addTenant('extraction');
    const cap = await atCap(t, tenant.workspaceId, 'extraction_calls');
    const res = await write(tenant, { text: PARAGRAPH });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      extraction: { status: 'skipped', reason: 'plan_limit' },
      chunks: 1,
    });
    expect(
      await t.database.db
        .select()
        .from(memories)
        .where(eq(memories.parentMemoryId, res.body.memory_id)),
    ).toEqual([]);
    const counted = await counters(t, tenant.workspaceId);
    expect(counted.extraction_calls).toEqual({ used: cap, reserved: 0 });
    expect(counted.embeds).toEqual({ used: 1, reserved: 0 });

    const off = await write(tenant, { text: 'Ema walks to work', extract: false });
    expect(off.body.extraction).toEqual({ status: 'skipped', reason: 'user_disabled' });
    const low = await write(tenant, { text: 'Ema bikes on Sundays', importance: 0.05 });
    expect(low.body.extraction).toEqual({ status: 'skipped', reason: 'low_importance' });

    // Both optional parts refused at once: stored, unembedded and unextracted.
    await atCap(t, tenant.workspaceId, 'embeds');
    const both = await write(tenant, { text: 'Ema reads before bed' });
    expect(both.body).toMatchObject({
      extraction: { status: 'skipped', reason: 'plan_limit' },
      embedding: 'skipped_due_to_budget',
    });
    expect(await memoryCount(t, tenant.workspaceId)).toBe(4);
    await expectNothingReserved(t, tenant.workspaceId);
  });

  it('a write that fails after its reservation leaves nothing reserved and nothing counted', async () => {
    const tenant = await t.addTenant('failing');
    // The parent's chunks embed before the reservation (in-process); the children's after it.
    const embed = t.deps.embeddings.embed.bind(t.deps.embeddings);
    vi.spyOn(t.deps.embeddings, 'embed')
      .mockImplementationOnce(embed)
      .mockRejectedValueOnce(new EmbeddingError('embedder unavailable', 503));
    const res = await write(tenant, { text: PARAGRAPH });
    expect(res.status).toBe(500);
    expect(await memoryCount(t, tenant.workspaceId)).toBe(0);
    const counted = await counters(t, tenant.workspaceId);
    expect(Object.keys(counted).length).toBeGreaterThan(0);
    for (const resource of Object.values(counted))
      expect(resource).toEqual({ used: 0, reserved: 0 });
  });

  it('no plan in force (402 TRIAL_EXPIRED) or an unverifiable entitlement (503): nothing written', async () => {
    const lapsed = await t.addTenant('lapsed');
    await billingEntitlement(
      t.database.db,
      lapsed.workspaceId,
      'build',
      { start: '2025-01-01T00:00:00Z', end: '2025-01-31T00:00:00Z' },
      // Payment failed and the grace period is over: no plan in force.
      { status: 'past_due' },
    );
    t.deps.plans.invalidate(lapsed.workspaceId);
    expectRefused(await write(lapsed, { text: 'Finn likes figs' }), 402, 'TRIAL_EXPIRED');
    expect(await memoryCount(t, lapsed.workspaceId)).toBe(0);

    const tenant = await t.addTenant('degraded');
    const degraded = meter(t.database.db, {
      loader: () => Promise.reject(new Error('billing check timed out')),
    }).gate;
    // The app's meter answers as one whose entitlement check times out.
    const reserve = vi
      .spyOn(t.deps.quota, 'reserve')
      .mockImplementation((usage) => degraded.reserve(usage));
    try {
      const res = await write(tenant, { text: 'Gus likes grapes' });
      expectRefused(res, 503, 'ENTITLEMENT_DEGRADED');
      expect(res.headers['retry-after']).toBe('30');
    } finally {
      reserve.mockRestore();
    }
    expect(await memoryCount(t, tenant.workspaceId)).toBe(0);
    await expectNothingReserved(t, tenant.workspaceId);
  });
});

describeDb('write path budget outcomes (a model extractor)', () => {
  let t: TestApp;
  let model: Server;
  let calls = 0;
  const text = 'Dana lives in Porto and prefers window seats when flying.';

  beforeAll(async () => {
    // A chat-completions endpoint on loopback: the real OpenAI extractor talks to it over HTTP.
    model = createServer((req, res) => {
      calls += 1;
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            choices: [
              {
                message: {
                  content: JSON.stringify({
                    memories: [
                      { text: 'Dana lives in Porto.', memory_type: 'fact' },
                      { text: 'Dana prefers window seats.', memory_type: 'preference' },
                    ],
                  }),
                },
              },
            ],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    const { port } = model.address() as AddressInfo;
    t = await createTestApp({
      MNEMO_LIMITS: 'on',
      MNEMO_EXTRACTION_PROVIDER: 'openai',
      MNEMO_EXTRACTION_BASE_URL: `http://127.0.0.1:${port}/v1`,
      MNEMO_EXTRACTION_MODEL: 'gpt-test',
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => model?.close(resolve));
  });

  describe('generation tokens', () => {
    it('under the cap: the call runs and its estimated tokens are committed', async () => {
      const tenant = await t.addTenant('model');
      const before = calls;
      const res = await writeTo(t, tenant, { text });
      expect(res.body.extraction).toEqual({ status: 'run' });
      expect(calls).toBe(before + 1);
      const counted = await counters(t, tenant.workspaceId);
      expect(counted.extraction_calls).toEqual({ used: 1, reserved: 0 });
      expect(counted.gen_tokens).toEqual({ used: estimateExtractionTokens(text), reserved: 0 });
      // Two children, a chunk each, embedded with the parent's chunk.
      expect(counted.embeds).toEqual({ used: 3, reserved: 0 });
    });

    it('over the cap: extraction skipped for budget_limit, the model never called', async () => {
      const tenant = await t.addTenant('model-over');
      // At the cap, any call (its prompt alone is hundreds of tokens) is over it.
      const cap = await atCap(t, tenant.workspaceId, 'gen_tokens');
      const before = calls;
      const res = await writeTo(t, tenant, { text });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        extraction: { status: 'skipped', reason: 'budget_limit' },
        chunks: 1,
      });
      expect(calls).toBe(before);
      expect(await memoryCount(t, tenant.workspaceId)).toBe(1);
      const counted = await counters(t, tenant.workspaceId);
      expect(counted.gen_tokens).toEqual({ used: cap, reserved: 0 });
      expect(counted.extraction_calls?.used ?? 0).toBe(0);

      // Calls spent too: the plan's call limit is the reason given.
      await atCap(t, tenant.workspaceId, 'extraction_calls');
      const both = await writeTo(t, tenant, { text: 'Dana flies to Lisbon in May.' });
      expect(both.body.extraction).toEqual({ status: 'skipped', reason: 'plan_limit' });
      expect(calls).toBe(before);
      await expectNothingReserved(t, tenant.workspaceId);
    });
  });
});

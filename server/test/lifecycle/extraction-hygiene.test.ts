import { eq, inArray } from 'drizzle-orm';
import { http, HttpResponse, delay } from 'msw';
import { setupServer } from 'msw/node';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { memories, memoryChunks, memoryLinks } from '../../src/db/schema/index.js';
import { assessMemory } from '../../src/services/lifecycle/intelligence.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const PARAGRAPH =
  'I moved to Berlin last month and started working at Siemens as an engineer. I love hiking and my favourite food is ramen. I need to renew my passport before June.';

describeDb('extraction into child memories', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const write = (body: object) =>
    request(t.app).post('/v1/memories').set('x-api-key', t.tenant.apiKey).send(body);

  it('splits a paragraph into linked, searchable children', async () => {
    const res = await write({ text: PARAGRAPH, user_id: 'ana' });
    expect(res.body.extraction).toEqual({ status: 'run' });
    const children = await t.database.db
      .select()
      .from(memories)
      .where(eq(memories.parentMemoryId, res.body.memory_id));
    expect(children.length).toBeGreaterThanOrEqual(4);
    expect(children.length).toBeLessThanOrEqual(10);
    const byText = new Map(children.map((child) => [child.text, child.memoryType]));
    expect(byText.get('I love hiking.')).toBe('preference');
    expect(byText.get('I need to renew my passport before June.')).toBe('task');
    expect(children.every((child) => child.sourceWeight === 0.8 && child.ownerId === 'ana')).toBe(
      true,
    );
    const links = await t.database.db
      .select()
      .from(memoryLinks)
      .where(eq(memoryLinks.sourceMemoryId, res.body.memory_id));
    expect(links.map((link) => link.relation)).toEqual(children.map(() => 'extracted'));

    const search = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ query: 'passport renewal', user_id: 'ana', search_mode: 'keyword' });
    expect(search.body.results.map((r: { text: string }) => r.text)).toContain(
      'I need to renew my passport before June.',
    );
    const child = await request(t.app)
      .get(`/v1/memories/${children[0]!.id}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(child.body.parent_memory_id).toBe(res.body.memory_id);
    expect(child.body.lifecycle_events.map((e: { event: string }) => e.event)).toEqual([
      'extracted',
    ]);
  });

  it("writes each child's assessment, metadata and vectors, as for a memory of its own", async () => {
    const res = await write({
      text: PARAGRAPH,
      user_id: 'ben',
      namespace: 'notes',
      metadata: { source: 'diary' },
      importance: 2,
      effective_at: '2026-01-05T00:00:00.000Z',
    });
    const children = await t.database.db
      .select()
      .from(memories)
      .where(eq(memories.parentMemoryId, res.body.memory_id));
    expect(children.length).toBeGreaterThanOrEqual(4);
    for (const child of children) {
      const assessment = assessMemory(
        {
          text: child.text,
          memoryType: child.memoryType as never,
          importance: 2,
          metadata: { source: 'diary' },
          effectiveAt: new Date('2026-01-05T00:00:00.000Z'),
          extracted: true,
        },
        child.createdAt,
      );
      expect(child).toMatchObject({
        ownerId: 'ben',
        ownerType: 'user',
        namespace: 'notes',
        scope: null,
        metadata: { source: 'diary' },
        importance: 2,
        chunkProfile: 'balanced',
        lifecycleState: 'active',
        effectiveAt: new Date('2026-01-05T00:00:00.000Z'),
        claims: assessment.claims,
        claimKeys: assessment.claimKeys,
        pinned: assessment.pinned,
        replacedByMemoryId: null,
        idempotencyKey: null,
      });
      expect(child.confidence).toBeCloseTo(assessment.confidence, 5);
      expect(child.sourceWeight).toBeCloseTo(assessment.sourceWeight, 5);
      expect(child.priorityScore).toBeCloseTo(assessment.priorityScore, 5);
    }
    const chunks = await t.database.db
      .select()
      .from(memoryChunks)
      .where(
        inArray(
          memoryChunks.memoryId,
          children.map((child) => child.id),
        ),
      );
    expect(chunks).toHaveLength(children.length);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ chunkIndex: 0, ownerId: 'ben', embeddingProvider: 'local' });
      expect(chunk.embedding).toHaveLength(chunk.embeddingDimension!);
    }
  });

  it('stores only the parent with extract: false, and skips low-importance text', async () => {
    const off = await write({
      text: PARAGRAPH.replace('Berlin', 'Hamburg'),
      user_id: 'ben',
      extract: false,
    });
    expect(off.body.extraction).toEqual({ status: 'skipped', reason: 'user_disabled' });
    const low = await write({
      text: PARAGRAPH.replace('Berlin', 'Munich'),
      user_id: 'cem',
      importance: 0.05,
    });
    expect(low.body.extraction).toEqual({ status: 'skipped', reason: 'low_importance' });
    for (const id of [off.body.memory_id, low.body.memory_id]) {
      expect(
        await t.database.db.select().from(memories).where(eq(memories.parentMemoryId, id)),
      ).toEqual([]);
    }
  });
});

describeDb('extraction through an OpenAI-compatible model', () => {
  const mock = setupServer();
  let mode: 'ok' | 'slow' = 'ok';
  let t: TestApp;
  beforeAll(async () => {
    mock.listen({ onUnhandledRequest: 'bypass' });
    mock.use(
      http.post('http://llm.test/v1/chat/completions', async () => {
        if (mode === 'slow') await delay(2_000);
        return HttpResponse.json({
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
        });
      }),
    );
    t = await createTestApp({
      MNEMO_EXTRACTION_PROVIDER: 'openai',
      MNEMO_EXTRACTION_BASE_URL: 'http://llm.test/v1',
      MNEMO_EXTRACTION_MODEL: 'gpt-test',
      MNEMO_EXTRACTION_TIMEOUT_MS: '300',
    });
  });
  afterAll(async () => {
    mock.close();
    await t?.close();
  });

  it('stores the model’s children, and degrades honestly when it times out', async () => {
    const ok = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ text: 'Dana lives in Porto and prefers window seats when flying.', user_id: 'dana' });
    expect(ok.body.extraction).toEqual({ status: 'run' });
    const children = await t.database.db
      .select()
      .from(memories)
      .where(eq(memories.parentMemoryId, ok.body.memory_id));
    expect(children.map((c) => [c.text, c.memoryType]).sort()).toEqual([
      ['Dana lives in Porto.', 'fact'],
      ['Dana prefers window seats.', 'preference'],
    ]);

    mode = 'slow';
    const slow = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ text: 'Eli works at a bakery and bikes to work every day.', user_id: 'eli' });
    expect(slow.status).toBe(200);
    expect(slow.body.extraction).toMatchObject({
      status: 'degraded',
      reason: 'extraction_error',
      error: expect.stringMatching(/timed out/),
    });
    const stored = await request(t.app)
      .get(`/v1/memories/${slow.body.memory_id}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(stored.body.text).toBe('Eli works at a bakery and bikes to work every day.');
  });
});

describeDb('POST /admin/memory-hygiene', () => {
  const TOKEN = 'admin-token-0123456789';
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN });
  });
  afterAll(async () => t?.close());

  const hygiene = (query: string, token: string | null = TOKEN) => {
    const req = request(t.app).post(`/admin/memory-hygiene${query}`);
    return token === null ? req : req.set('x-admin-token', token);
  };

  it('refuses a missing or wrong admin token with 401', async () => {
    expect((await hygiene('', null)).status).toBe(401);
    const wrong = await hygiene('', 'admin-token-0123456780');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('UNAUTHORIZED');
    // An API key is not an admin token.
    const key = await request(t.app)
      .post('/admin/memory-hygiene')
      .set('x-api-key', t.tenant.apiKey);
    expect(key.status).toBe(401);
  });

  it('validates its query', async () => {
    const res = await hygiene('?limit=0&workspace_id=nope&dry_run=maybe');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.error.details).sort()).toEqual([
      'dry_run',
      'limit',
      'workspace_id',
    ]);
  });

  it('reports near duplicates and expired memories on a dry run, then fixes them', async () => {
    const ws = t.tenant.workspaceId;
    const base = { workspaceId: ws, ownerId: 'hy', ownerType: 'user' };
    const [a, b, c, expired] = await t.database.db
      .insert(memories)
      .values([
        {
          ...base,
          text: 'Hugo plays the cello in an orchestra',
          contentHash: 'h1',
          createdAt: new Date('2026-01-01'),
        },
        {
          ...base,
          text: 'Hugo plays the cello in an orchestra.',
          contentHash: 'h1',
          createdAt: new Date('2026-01-02'),
        },
        {
          ...base,
          text: 'Hugo plays the cello in an orchestra on weekends',
          contentHash: 'h2',
          createdAt: new Date('2026-01-03'),
        },
        {
          ...base,
          text: 'Hugo is in Vienna today',
          contentHash: 'h3',
          expiresAt: new Date(Date.now() - 1000),
        },
      ])
      .returning({ id: memories.id });
    const dry = await hygiene(`?dry_run=true&workspace_id=${ws}`);
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({
      dry_run: true,
      expired: { count: 1, memory_ids: [expired!.id] },
      duplicates: { count: 1 },
    });
    // c adds detail (Jaccard 0.68 < 0.9): a refinement, not a duplicate.
    expect(dry.body.duplicates.superseded).toEqual([
      { memory_id: b!.id, kept_memory_id: a!.id, similarity: 1 },
    ]);
    const untouched = await t.database.db.select().from(memories).where(eq(memories.ownerId, 'hy'));
    expect(untouched.every((m) => m.lifecycleState === 'active')).toBe(true);

    const real = await hygiene(`?workspace_id=${ws}`);
    expect(real.body).toMatchObject({
      dry_run: false,
      expired: { count: 1 },
      duplicates: { count: 1 },
    });
    const states = new Map(
      (await t.database.db.select().from(memories).where(eq(memories.ownerId, 'hy'))).map((m) => [
        m.id,
        m.lifecycleState,
      ]),
    );
    expect([a, b, c, expired].map((m) => states.get(m!.id))).toEqual([
      'active',
      'replaced',
      'active',
      'archived',
    ]);
    const view = await request(t.app)
      .get(`/v1/memories/${b!.id}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(view.body.lifecycle_events).toEqual([
      expect.objectContaining({
        event: 'replaced',
        rule: 'hygiene_duplicate',
        related_memory_id: a!.id,
      }),
    ]);
    const again = await hygiene(`?workspace_id=${ws}`);
    expect(again.body).toMatchObject({ expired: { count: 0 }, duplicates: { count: 0 } });
  });
});

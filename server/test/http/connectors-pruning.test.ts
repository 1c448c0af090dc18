import { contract, DEFAULT_CONNECTOR_SETTINGS } from '@mnemo/contract';
import { eq, sql } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  memories,
  memoryChunks,
  domainEvents,
  workspaceConnectorSettings,
} from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

const SETTINGS = contract.connectors.getConnectorSettings.path;
const METRICS = contract.audit.getPruningMetrics.path;

describeDb('GET/PATCH /v1/connectors/settings', () => {
  let t: TestApp;
  let other: TestTenant;
  const as = (tenant: TestTenant) => ({ authorization: `Bearer ${tenant.apiKey}` });
  const patch = (body: unknown, tenant?: TestTenant) =>
    request(t.app)
      .patch(SETTINGS)
      .set(as(tenant ?? t.tenant))
      .send(body as object);
  const read = (tenant?: TestTenant) =>
    request(t.app)
      .get(SETTINGS)
      .set(as(tenant ?? t.tenant));

  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
  }, 120_000);
  afterAll(async () => t?.close());

  it('starts from the documented defaults, never written', async () => {
    const res = await read();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...DEFAULT_CONNECTOR_SETTINGS, updated_at: null });
  });

  it('merges a PATCH field by field and returns every setting', async () => {
    const first = await patch({
      webhook: { enabled: true, allowed_sources: ['zendesk', 'slack:#support'] },
    });
    expect(first.status).toBe(200);
    expect(
      contract.connectors.updateConnectorSettings.responses[200].parse(first.body),
    ).toBeTruthy();
    expect(first.body.webhook).toEqual({
      ...DEFAULT_CONNECTOR_SETTINGS.webhook,
      enabled: true,
      allowed_sources: ['zendesk', 'slack:#support'],
    });
    expect(first.body.chat_import).toEqual(DEFAULT_CONNECTOR_SETTINGS.chat_import);
    expect(first.body.updated_at).not.toBeNull();

    const second = await patch({
      chat_import: { extract: false, default_metadata: { channel: 'chat', tier: 2 } },
      webhook: { default_namespace: 'support' },
    });
    expect(second.body.webhook).toMatchObject({
      enabled: true,
      allowed_sources: ['zendesk', 'slack:#support'],
      default_namespace: 'support',
    });
    expect(second.body.chat_import).toMatchObject({
      extract: false,
      enabled: true,
      default_metadata: { channel: 'chat', tier: 2 },
    });
    // Arrays and default_metadata are replaced whole; null clears the namespace.
    const third = await patch({
      chat_import: { default_metadata: { channel: 'voice' } },
      webhook: { allowed_sources: [], default_namespace: null },
    });
    expect(third.body.chat_import.default_metadata).toEqual({ channel: 'voice' });
    expect(third.body.webhook).toMatchObject({ allowed_sources: [], default_namespace: null });
    expect((await read()).body).toEqual(third.body);
  });

  it('keeps workspaces apart', async () => {
    expect((await read(other)).body).toEqual({ ...DEFAULT_CONNECTOR_SETTINGS, updated_at: null });
    await patch({ webhook: { default_owner_type: 'team' } }, other).expect(200);
    expect((await read()).body.webhook.default_owner_type).toBe('user');
    expect((await read(other)).body.webhook.default_owner_type).toBe('team');
  });

  it('lets concurrent PATCHes of different fields both land', async () => {
    await Promise.all([
      patch({ webhook: { extract: false } }).expect(200),
      patch({ chat_import: { default_owner_type: 'app' } }).expect(200),
      patch({ chat_import: { allowed_sources: ['intercom'] } }).expect(200),
    ]);
    const body = (await read()).body;
    expect(body.webhook.extract).toBe(false);
    expect(body.chat_import).toMatchObject({
      default_owner_type: 'app',
      allowed_sources: ['intercom'],
    });
  });

  describe('bad input is a 400 envelope and changes nothing', () => {
    const tooManyKeys = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i]));
    it.each([
      [{}],
      [{ webhook: {} }],
      [{ email: { enabled: true } }],
      [{ webhook: { enabled: 'yes' } }],
      [{ webhook: { unknown_field: 1 } }],
      [{ webhook: { default_owner_type: 'org' } }],
      [{ webhook: { default_metadata: tooManyKeys } }],
      [{ webhook: { default_metadata: { nested: { a: 1 } } } }],
      [{ webhook: { allowed_sources: ['has space'] } }],
      [{ webhook: { allowed_sources: Array.from({ length: 51 }, (_, i) => `s${i}`) } }],
      [{ webhook: { default_namespace: 'n'.repeat(257) } }],
      [{ updated_at: '2026-01-01T00:00:00Z' }],
      [[]],
    ])('%j', async (body) => {
      const before = (await read()).body;
      const rows = await t.database.db.select().from(workspaceConnectorSettings);
      const res = await patch(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
      expect(res.body.request_id).toBe(res.headers['x-request-id']);
      expect((await read()).body).toEqual(before);
      expect(await t.database.db.select().from(workspaceConnectorSettings)).toEqual(rows);
    });
  });
});

describeDb('GET /v1/pruning/metrics', () => {
  let t: TestApp;
  let other: TestTenant;
  const metrics = (tenant: TestTenant) =>
    request(t.app).get(METRICS).set('authorization', `Bearer ${tenant.apiKey}`);
  const write = async (tenant: TestTenant, text: string) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('authorization', `Bearer ${tenant.apiKey}`)
      .send({ user_id: 'u1', text, extract: false });
    expect(res.status).toBe(200);
    expect(res.body.deduped ?? false).toBe(false);
    return res.body.memory_id as string;
  };

  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
  }, 120_000);
  afterAll(async () => t?.close());

  it('is all zeros for an empty workspace', async () => {
    const res = await metrics(t.tenant);
    expect(res.status).toBe(200);
    expect(contract.audit.getPruningMetrics.responses[200].parse(res.body)).toBeTruthy();
    expect(res.body).toMatchObject({
      workspace_id: t.tenant.workspaceId,
      memories: { total: 0, active: 0, replaced: 0, archived: 0, expired_pending: 0 },
      duplicates: { exact_active: 0 },
      chunks: { total: 0, active: 0, per_memory_avg: 0, per_memory_max: 0, orphaned: 0 },
    });
  });

  it('counts states, pending expiry, duplicates and chunks of the caller only', async () => {
    const db = t.database.db;
    const a = await write(t.tenant, 'Alice prefers tea in the morning and coffee after lunch.');
    const b = await write(t.tenant, 'Alice lives in Lisbon and works at the harbour office.');
    const c = await write(t.tenant, 'Alice has a dog named Biscuit who likes long walks.');
    const long = Array.from(
      { length: 60 },
      (_, i) => `Paragraph ${i}: Alice described step ${i} of her onboarding in some detail.`,
    ).join('\n\n');
    const d = await write(t.tenant, long);
    await write(other, 'Bob is in the other workspace and must not be counted.');
    // States the API cannot reach directly in one step: archived, expired but still active,
    // an exact duplicate left active, a duplicate supersession recorded by hygiene.
    await db.update(memories).set({ lifecycleState: 'archived' }).where(eq(memories.id, b));
    await db
      .update(memories)
      .set({ expiresAt: sql`now() - interval '1 day'` })
      .where(eq(memories.id, c));
    const [hashOfA] = await db
      .select({ hash: memories.contentHash })
      .from(memories)
      .where(eq(memories.id, a));
    await db.update(memories).set({ contentHash: hashOfA!.hash }).where(eq(memories.id, c));
    await db.insert(domainEvents).values({
      workspaceId: t.tenant.workspaceId,
      memoryId: b,
      kind: 'replaced',
      rule: 'hygiene_duplicate',
      relatedMemoryId: a,
    });

    const chunkCounts = new Map<string, number>();
    for (const row of await db
      .select({ memoryId: memoryChunks.memoryId })
      .from(memoryChunks)
      .where(eq(memoryChunks.workspaceId, t.tenant.workspaceId))) {
      chunkCounts.set(row.memoryId, (chunkCounts.get(row.memoryId) ?? 0) + 1);
    }
    expect(chunkCounts.get(d)).toBeGreaterThan(1);
    const total = [...chunkCounts.values()].reduce((sum, n) => sum + n, 0);

    const res = await metrics(t.tenant);
    expect(res.status).toBe(200);
    expect(res.body.memories).toEqual({
      total: 4,
      active: 3,
      replaced: 0,
      archived: 1,
      expired_pending: 1,
    });
    expect(res.body.duplicates).toEqual({
      exact_active: 1,
      superseded: {
        hygiene_duplicate: 1,
        near_duplicate: 0,
        semantic_duplicate: 0,
        covered_by_existing: 0,
      },
    });
    expect(res.body.chunks).toEqual({
      total,
      active: total - (chunkCounts.get(b) ?? 0),
      per_memory_avg: Math.round((total / chunkCounts.size) * 100) / 100,
      per_memory_max: chunkCounts.get(d),
      orphaned: 0,
    });

    const theirs = await metrics(other);
    expect(theirs.body.workspace_id).toBe(other.workspaceId);
    expect(theirs.body.memories).toMatchObject({ total: 1, active: 1 });
    expect(theirs.body.duplicates.superseded.hygiene_duplicate).toBe(0);
  });

  it('takes no parameters (an unknown one is a 400); no credentials is a 401', async () => {
    expect((await request(t.app).get(METRICS)).status).toBe(401);
    // The workspace always comes from the credentials: naming another is refused, not obeyed.
    const res = await request(t.app)
      .get(`${METRICS}?workspace_id=${other.workspaceId}`)
      .set('authorization', `Bearer ${t.tenant.apiKey}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
  });
});

import { and, eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { linkedFirstChunks } from '../../src/db/queries/signals.js';
import { memories, memoryLinks } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

describeDb('POST, GET and DELETE /v1/memories/{id}/links', () => {
  let t: TestApp;
  let other: TestTenant;
  const ids: Record<string, string> = {};

  const write = async (key: string, body: object, tenant: TestTenant = t.tenant) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', tenant.apiKey)
      .send(body);
    expect(res.status).toBe(200);
    ids[key] = res.body.memory_id;
    return res.body.memory_id as string;
  };
  const link = (id: string, body: object, tenant: TestTenant = t.tenant) =>
    request(t.app).post(`/v1/memories/${id}/links`).set('x-api-key', tenant.apiKey).send(body);
  const unlink = (id: string, query: Record<string, string>, tenant: TestTenant = t.tenant) =>
    request(t.app).delete(`/v1/memories/${id}/links`).query(query).set('x-api-key', tenant.apiKey);
  const list = (id: string, tenant: TestTenant = t.tenant) =>
    request(t.app).get(`/v1/memories/${id}/links`).set('x-api-key', tenant.apiKey);
  const edgeCount = async () =>
    (
      await t.database.db
        .select()
        .from(memoryLinks)
        .where(eq(memoryLinks.workspaceId, t.tenant.workspaceId))
    ).length;

  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
    await write('paris', {
      text: 'Jane lives in Paris with her cat Milo',
      user_id: 'jane',
      extract: false,
    });
    await write('milo', {
      text: 'Milo the cat is allergic to fish',
      user_id: 'jane',
      extract: false,
    });
    await write('oslo', { text: 'Bob lives in Oslo', user_id: 'bob', extract: false });
    await write(
      'foreign',
      { text: 'Someone else entirely', user_id: 'jane', extract: false },
      other,
    );
    // Booting and migrating a fresh database takes long on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  it('creates a typed edge, and an existing edge is returned as is (idempotent)', async () => {
    const first = await link(ids.paris!, { target_id: ids.milo, relation: 'mentions' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      created: true,
      link: {
        id: expect.any(String),
        source_id: ids.paris,
        target_id: ids.milo,
        relation: 'mentions',
        created_at: expect.any(String),
      },
    });
    const again = await link(ids.paris!, { target_id: ids.milo, relation: 'mentions' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ created: false, link: first.body.link });

    const other = await link(ids.paris!, { target_id: ids.milo });
    expect(other.body).toMatchObject({ created: true, link: { relation: 'related' } });
    expect(await edgeCount()).toBe(2);

    const listed = await list(ids.milo!);
    expect(listed.status).toBe(200);
    expect(listed.body.results.map((l: { relation: string }) => l.relation)).toEqual([
      'mentions',
      'related',
    ]);
  });

  it('concurrent creates of one edge store it once', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => link(ids.milo!, { target_id: ids.paris, relation: 'about' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(responses.filter((r) => r.body.created === true)).toHaveLength(1);
    expect(new Set(responses.map((r) => r.body.link.id)).size).toBe(1);
  });

  it('refuses bad input with a 400 envelope and stores nothing', async () => {
    const before = await edgeCount();
    const cases: Array<[string, object]> = [
      [ids.paris!, { target_id: ids.paris }],
      [ids.paris!, { target_id: 'not-a-uuid' }],
      [ids.paris!, { target_id: ids.milo, relation: 'Has Spaces' }],
      [ids.paris!, { target_id: ids.milo, relation: 'x'.repeat(41) }],
      [ids.paris!, { target_id: ids.milo, extra: true }],
      [ids.paris!, {}],
      [ids.paris!, { target_id: ids.oslo }],
    ];
    for (const [id, body] of cases) {
      const res = await link(id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({
        error: { code: 'BAD_REQUEST', message: expect.any(String) },
        request_id: expect.any(String),
      });
    }
    expect(await edgeCount()).toBe(before);
  });

  it('treats another workspace’s memories as missing, and never shows its links', async () => {
    const before = await edgeCount();
    for (const res of [
      await link(ids.paris!, { target_id: ids.foreign }),
      await link(ids.foreign!, { target_id: ids.paris }),
      await link('00000000-0000-4000-8000-000000000000', { target_id: ids.paris }),
      await link('nope', { target_id: ids.paris }),
      await list(ids.paris!, other),
      await unlink(ids.paris!, { target_id: ids.milo! }, other),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect(await edgeCount()).toBe(before);
    const theirs = await list(ids.foreign!, other);
    expect(theirs.body).toEqual({ results: [] });
  });

  it('refuses a memory that is no longer live (409)', async () => {
    const old = await write('old', {
      text: 'Jane used to live in Rome',
      user_id: 'jane',
      extract: false,
    });
    await t.database.db
      .update(memories)
      .set({ lifecycleState: 'archived' })
      .where(eq(memories.id, old));
    const res = await link(ids.paris!, { target_id: old });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'CONFLICT',
      details: { target_id: expect.any(Array) },
    });
  });

  it('deletes one relation or all, answers 404 when there is no such edge', async () => {
    const one = await unlink(ids.paris!, { target_id: ids.milo!, relation: 'mentions' });
    expect(one.status).toBe(200);
    expect(one.body.deleted).toEqual([
      expect.objectContaining({ source_id: ids.paris, target_id: ids.milo, relation: 'mentions' }),
    ]);
    const again = await unlink(ids.paris!, { target_id: ids.milo!, relation: 'mentions' });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');

    await link(ids.paris!, { target_id: ids.milo, relation: 'mentions' });
    const all = await unlink(ids.paris!, { target_id: ids.milo! });
    expect(all.body.deleted.map((l: { relation: string }) => l.relation).sort()).toEqual([
      'mentions',
      'related',
    ]);
    // The reverse edge (milo → paris) is its own and stays.
    const left = await t.database.db
      .select()
      .from(memoryLinks)
      .where(
        and(eq(memoryLinks.sourceMemoryId, ids.milo!), eq(memoryLinks.targetMemoryId, ids.paris!)),
      );
    expect(left).toHaveLength(1);

    const bad = await unlink(ids.paris!, { target_id: 'zzz' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('BAD_REQUEST');
  });

  it('context follows a link made here, and deleting it stops that', async () => {
    await link(ids.paris!, { target_id: ids.milo, relation: 'mentions' });
    const context = () =>
      request(t.app)
        .post('/v1/context')
        .set('x-api-key', t.tenant.apiKey)
        .send({ query: 'Jane lives in Paris cat Milo', user_id: 'jane', top_k: 1 });
    const linked = await context();
    expect(linked.status).toBe(200);
    expect(linked.body.citations.map((c: { memory_id: string }) => c.memory_id)).toEqual([
      ids.paris,
      ids.milo,
    ]);
    expect(linked.body.context_text).toContain('(linked to [1])');

    await unlink(ids.paris!, { target_id: ids.milo! });
    await unlink(ids.milo!, { target_id: ids.paris! });
    const unlinked = await context();
    expect(unlinked.body.citations.map((c: { memory_id: string }) => c.memory_id)).toEqual([
      ids.paris,
    ]);
  });

  it('deleting a memory drops its links', async () => {
    const note = await write('note', {
      text: 'Milo sleeps all day',
      user_id: 'jane',
      extract: false,
    });
    await link(note, { target_id: ids.milo });
    const del = await request(t.app)
      .delete(`/v1/memories/${note}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(del.status).toBe(200);
    const rows = await t.database.db
      .select()
      .from(memoryLinks)
      .where(eq(memoryLinks.sourceMemoryId, note));
    expect(rows).toEqual([]);
  });

  it("context names the first ranked hit a linked memory is linked to, and keeps the hits' order", async () => {
    const walk = await write('walk', {
      text: 'Jane walks Milo in the park',
      user_id: 'jane',
      extract: false,
    });
    expect((await link(ids.paris!, { target_id: walk })).status).toBe(200);
    expect((await link(walk, { target_id: ids.milo })).status).toBe(200);
    const [owner] = await t.database.db
      .select({ ownerType: memories.ownerType, ownerId: memories.ownerId })
      .from(memories)
      .where(eq(memories.id, walk));
    const space = { workspaceId: t.tenant.workspaceId, ...owner! };
    const linked = (hits: string[], limit = 15) =>
      linkedFirstChunks(t.database.db, space, hits, limit).then((rows) =>
        rows.map((row) => [row.memoryId, row.linkedFrom, row.chunkIndex]),
      );
    // Linked to both hits: named after whichever ranks first; the hits themselves never appear.
    expect(await linked([ids.paris!, ids.milo!])).toEqual([[walk, ids.paris, 0]]);
    expect(await linked([ids.milo!, ids.paris!])).toEqual([[walk, ids.milo, 0]]);
    expect(await linked([walk])).toEqual(
      expect.arrayContaining([
        [ids.paris, walk, 0],
        [ids.milo, walk, 0],
      ]),
    );
    expect(await linked([walk], 1)).toHaveLength(1);
    // Another workspace's view of the same ids finds nothing.
    expect(
      await linkedFirstChunks(
        t.database.db,
        { ...space, workspaceId: other.workspaceId },
        [ids.paris!],
        15,
      ),
    ).toEqual([]);
  });
});

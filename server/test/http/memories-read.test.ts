import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { memories, memoryChunks } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

async function insertMemory(
  db: Database,
  workspaceId: string,
  values: {
    ownerId: string;
    text: string;
    namespace?: string;
    memoryType?: string;
    metadata?: Record<string, string>;
  },
): Promise<string> {
  const [row] = await db
    .insert(memories)
    .values({ workspaceId, contentHash: values.text, ...values })
    .returning({ id: memories.id });
  if (!row) throw new Error('insert failed');
  await db.insert(memoryChunks).values({
    memoryId: row.id,
    workspaceId,
    ownerId: values.ownerId,
    ownerType: 'user',
    chunkIndex: 0,
    text: values.text,
  });
  return row.id;
}

describeDb('memory reads and deletes', () => {
  let t: TestApp;
  let other: TestTenant;
  let aliceId: string;
  let bobId: string;
  let foreignId: string;
  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
    aliceId = await insertMemory(t.database.db, t.tenant.workspaceId, {
      ownerId: 'alice',
      text: 'Alice prefers tea',
      namespace: 'prefs',
      memoryType: 'preference',
      metadata: { source: 'chat' },
    });
    bobId = await insertMemory(t.database.db, t.tenant.workspaceId, {
      ownerId: 'bob',
      text: 'Bob lives in Oslo',
    });
    foreignId = await insertMemory(t.database.db, other.workspaceId, {
      ownerId: 'alice',
      text: 'Secret of another workspace',
    });
  });
  afterAll(async () => t?.close());

  const as = (tenant: TestTenant) => ({ 'x-api-key': tenant.apiKey });

  it('reads one memory as the memory object', async () => {
    const res = await request(t.app).get(`/v1/memories/${aliceId}`).set(as(t.tenant));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: aliceId,
      text: 'Alice prefers tea',
      owner_id: 'alice',
      owner_type: 'user',
      namespace: 'prefs',
      memory_type: 'preference',
      metadata: { source: 'chat' },
      lifecycle_state: 'active',
      chunks: 1,
    });
  });

  it('never reads or deletes another workspace’s memory', async () => {
    const read = await request(t.app).get(`/v1/memories/${foreignId}`).set(as(t.tenant));
    expect(read.status).toBe(404);
    expect(read.body.error).toEqual({
      code: 'NOT_FOUND',
      message: `Memory ${foreignId} not found`,
    });
    const del = await request(t.app).delete(`/v1/memories/${foreignId}`).set(as(t.tenant));
    expect(del.status).toBe(404);
    const stillThere = await request(t.app).get(`/v1/memories/${foreignId}`).set(as(other));
    expect(stillThere.status).toBe(200);
    const list = await request(t.app)
      .get('/v1/memories')
      .query({ all_owners: 'true' })
      .set(as(t.tenant));
    expect(list.body.results.map((m: { id: string }) => m.id).sort()).toEqual(
      [aliceId, bobId].sort(),
    );
  });

  it('answers a malformed id with 404, not a database error', async () => {
    const res = await request(t.app).get('/v1/memories/not-a-uuid').set(as(t.tenant));
    expect(res.status).toBe(404);
  });

  it('lists with owner, type, namespace and metadata filters and consistent paging', async () => {
    const byOwner = await request(t.app)
      .get('/v1/memories')
      .query({ user_id: 'alice' })
      .set(as(t.tenant));
    expect(byOwner.body).toMatchObject({ total: 1, page: 1, page_size: 20, has_more: false });
    expect(byOwner.body.results[0].id).toBe(aliceId);
    const byMeta = await request(t.app)
      .get('/v1/memories')
      .query({
        all_owners: 'true',
        metadata: JSON.stringify({ source: 'chat' }),
        memory_type: 'preference',
        namespace: 'prefs',
      })
      .set(as(t.tenant));
    expect(byMeta.body.total).toBe(1);
    const page1 = await request(t.app)
      .get('/v1/memories')
      .query({ page_size: 1, all_owners: 'true' })
      .set(as(t.tenant));
    const page2 = await request(t.app)
      .get('/v1/memories')
      .query({ page_size: 1, page: 2, all_owners: 'true' })
      .set(as(t.tenant));
    expect(page1.body).toMatchObject({ total: 2, has_more: true, page: 1 });
    expect(page2.body).toMatchObject({ total: 2, has_more: false, page: 2 });
    expect(page1.body.results[0].id).not.toBe(page2.body.results[0].id);
  });

  it('deletes a memory with its chunks', async () => {
    const res = await request(t.app).delete(`/v1/memories/${bobId}`).set(as(t.tenant));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: bobId, deleted: true, deleted_children: [] });
    const gone = await request(t.app).get(`/v1/memories/${bobId}`).set(as(t.tenant));
    expect(gone.status).toBe(404);
    const chunks = await t.database.db.select().from(memoryChunks);
    expect(chunks.map((c) => c.memoryId)).not.toContain(bobId);
  });
});

import { sql } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executeRows } from '../../src/db/client.js';
import { ownerChunksQuery } from '../../src/db/queries/recall.js';
import { workspaces } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

// Keyword recall's collection size comes from owner_chunk_counts, which triggers keep: after
// every kind of write and delete it must equal counting the chunks.
describeDb('owner chunk counts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const counted = async () =>
    Object.fromEntries(
      (
        await executeRows<{ owner_id: string; chunks: string | number }>(
          t.database.db,
          sql`select owner_id, chunks from owner_chunk_counts where workspace_id = ${t.tenant.workspaceId}`,
        )
      ).map((row) => [row.owner_id, Number(row.chunks)]),
    );
  const actual = async () =>
    Object.fromEntries(
      (
        await executeRows<{ owner_id: string; chunks: string | number }>(
          t.database.db,
          sql`select owner_id, count(*) as chunks from memory_chunks where workspace_id = ${t.tenant.workspaceId} group by owner_id`,
        )
      ).map((row) => [row.owner_id, Number(row.chunks)]),
    );
  const write = async (user: string, text: string) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: user, text, extract: false });
    expect(res.status).toBe(200);
    return res.body.memory_id as string;
  };

  it('follows writes, deletes and erasure over HTTP, and keyword search reads it', async () => {
    const long = Array.from(
      { length: 60 },
      (_, i) => `Sentence ${i} about the garden, the roses and the watering schedule.`,
    ).join(' ');
    const first = await write('alice', 'Alice keeps bees in the garden');
    await write('alice', long);
    await write('alice', 'Alice prefers green tea in the morning');
    await write('bob', 'Bob plays the cello on Sundays');
    const before = await actual();
    expect(before.alice).toBeGreaterThan(3); // the long memory was split into chunks
    expect(await counted()).toEqual(before);

    const filter = { workspaceId: t.tenant.workspaceId, ownerType: 'user', ownerId: 'alice' };
    const [size] = await executeRows<{ count: string | number }>(
      t.database.db,
      ownerChunksQuery(t.database.db, filter),
    );
    expect(Number(size?.count)).toBe(before.alice);
    const search = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ query: 'bees garden', user_id: 'alice', search_mode: 'keyword' });
    expect(search.status).toBe(200);
    expect(search.body.results[0].memory_id).toBe(first);

    const deleted = await request(t.app)
      .delete(`/v1/memories/${first}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(deleted.status).toBeLessThan(300);
    expect(await counted()).toEqual(await actual());

    const erased = await request(t.app)
      .post('/v1/erase')
      .set('x-api-key', t.tenant.apiKey)
      .send({ owner_id: 'alice' });
    expect(erased.status).toBe(200);
    // No row is left holding the erased owner's id.
    expect(await counted()).toEqual({ bob: 1 });
    expect(await actual()).toEqual({ bob: 1 });
  });

  it('goes with its workspace', async () => {
    const other = await t.addTenant('gone');
    await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', other.apiKey)
      .send({ user_id: 'carol', text: 'Carol runs marathons', extract: false });
    await t.database.db.delete(workspaces).where(sql`${workspaces.id} = ${other.workspaceId}`);
    const left = await executeRows(
      t.database.db,
      sql`select 1 from owner_chunk_counts where workspace_id = ${other.workspaceId}`,
    );
    expect(left).toHaveLength(0);
  });
});

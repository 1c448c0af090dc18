import { eq, inArray } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { memories, memoryChunks } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

// Three statements: the local extractor splits them into child memories of the written one.
const PARAGRAPH =
  'I moved to Berlin last month and started working at Siemens as an engineer. I love hiking and my favourite food is ramen. I need to renew my passport before June.';

describeDb(
  'DELETE /v1/memories/{id}: the cascade to extracted children, said in the answer',
  () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    }, 120_000);
    afterAll(async () => t?.close());

    const key = () => ({ 'x-api-key': t.tenant.apiKey });
    const childrenOf = async (id: string) =>
      (
        await t.database.db
          .select({ id: memories.id })
          .from(memories)
          .where(eq(memories.parentMemoryId, id))
      ).map((row) => row.id);

    it('lists the extracted children it deleted; they, their chunks and the parent are gone', async () => {
      const written = await request(t.app)
        .post('/v1/memories')
        .set(key())
        .send({ text: PARAGRAPH, user_id: 'lena' });
      expect(written.status).toBe(200);
      expect(written.body.extraction.status).toBe('run');
      const parent = written.body.memory_id as string;
      const children = await childrenOf(parent);
      expect(children.length).toBeGreaterThan(1);
      const kept = await request(t.app)
        .post('/v1/memories')
        .set(key())
        .send({ text: 'Lena prefers window seats', user_id: 'lena', extract: false });

      const del = await request(t.app).delete(`/v1/memories/${parent}`).set(key());
      expect(del.status).toBe(200);
      expect(del.body.id).toBe(parent);
      expect(del.body.deleted).toBe(true);
      expect([...del.body.deleted_children].sort()).toEqual([...children].sort());

      for (const id of [parent, ...children])
        expect((await request(t.app).get(`/v1/memories/${id}`).set(key())).status).toBe(404);
      const chunks = await t.database.db
        .select()
        .from(memoryChunks)
        .where(inArray(memoryChunks.memoryId, [parent, ...children]));
      expect(chunks).toEqual([]);
      // Others of the owner stay.
      expect(
        (await request(t.app).get(`/v1/memories/${kept.body.memory_id}`).set(key())).status,
      ).toBe(200);
    });

    it('deleting a child leaves its parent and siblings; a memory without children lists none', async () => {
      const written = await request(t.app)
        .post('/v1/memories')
        .set(key())
        .send({ text: PARAGRAPH.replace('Berlin', 'Munich'), user_id: 'mia' });
      const parent = written.body.memory_id as string;
      const [child, ...siblings] = await childrenOf(parent);
      const del = await request(t.app).delete(`/v1/memories/${child}`).set(key());
      expect(del.body).toEqual({ id: child, deleted: true, deleted_children: [] });
      expect((await request(t.app).get(`/v1/memories/${parent}`).set(key())).status).toBe(200);
      expect((await childrenOf(parent)).sort()).toEqual([...siblings].sort());
    });

    it('another workspace cannot delete the tree: 404, and nothing goes', async () => {
      const written = await request(t.app)
        .post('/v1/memories')
        .set(key())
        .send({ text: PARAGRAPH.replace('Berlin', 'Hamburg'), user_id: 'max' });
      const parent = written.body.memory_id as string;
      const children = await childrenOf(parent);
      const other = await t.addTenant('other');
      const del = await request(t.app)
        .delete(`/v1/memories/${parent}`)
        .set('x-api-key', other.apiKey);
      expect(del.status).toBe(404);
      expect(await childrenOf(parent)).toEqual(children);
    });
  },
);

import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextFeedback, memories, savedSearches } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

describeDb('search history, replay and context feedback', () => {
  let t: TestApp;
  let other: TestTenant;
  const ids: Record<string, string> = {};

  const write = async (key: string, body: object, tenant: TestTenant = t.tenant) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', tenant.apiKey)
      .send({ extract: false, ...body });
    expect(res.status).toBe(200);
    ids[key] = res.body.memory_id;
    return res.body.memory_id as string;
  };
  const search = (body: object, tenant: TestTenant = t.tenant, save = true) => {
    const req = request(t.app).post('/v1/search').set('x-api-key', tenant.apiKey);
    return (save ? req.set('x-save-history', '1') : req).send(body);
  };
  const history = (query: Record<string, string | number> = {}, tenant: TestTenant = t.tenant) =>
    request(t.app).get('/v1/search/history').query(query).set('x-api-key', tenant.apiKey);
  const replay = (body: object, tenant: TestTenant = t.tenant) =>
    request(t.app).post('/v1/search/replay').set('x-api-key', tenant.apiKey).send(body);
  const feedback = (body: object, tenant: TestTenant = t.tenant) =>
    request(t.app).post('/v1/context/feedback').set('x-api-key', tenant.apiKey).send(body);
  const feedbackRows = () =>
    t.database.db
      .select()
      .from(contextFeedback)
      .where(eq(contextFeedback.workspaceId, t.tenant.workspaceId));

  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
    await write('paris', { text: 'Jane lives in Paris with her cat Milo', user_id: 'jane' });
    await write('nurse', { text: 'Jane works as a nurse at the city hospital', user_id: 'jane' });
    await write('tea', { text: 'Jane prefers green tea over coffee', user_id: 'jane' });
    await write('bob', { text: 'Bob lives in Oslo and works at the hospital', user_id: 'bob' });
    await write('foreign', { text: 'Jane lives in Rome', user_id: 'jane' }, other);
    // Booting and migrating a fresh database takes long on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  describe('GET /v1/search/history', () => {
    let since: string;
    beforeAll(async () => {
      expect((await search({ query: 'Jane Paris', user_id: 'jane' })).status).toBe(200);
      expect((await search({ query: 'hospital', user_id: 'bob' })).status).toBe(200);
      // Saved only with the header.
      expect(
        (await search({ query: 'unsaved tea', user_id: 'jane' }, t.tenant, false)).status,
      ).toBe(200);
      await t.deps.background.drain();
      since = new Date().toISOString();
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(
        (await search({ query: 'Jane tea', user_id: 'jane', search_mode: 'keyword' })).status,
      ).toBe(200);
      expect((await search({ query: 'Rome', user_id: 'jane' }, other)).status).toBe(200);
    });

    it('lists this workspace’s saved searches, newest first, paged', async () => {
      const res = await history();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, page_size: 20, total: 3, has_more: false });
      expect(res.body.results.map((r: { query: string }) => r.query)).toEqual([
        'Jane tea',
        'hospital',
        'Jane Paris',
      ]);
      expect(res.body.results[0]).toEqual({
        query_id: expect.any(String),
        request_id: expect.any(String),
        owner_id: 'jane',
        owner_type: 'user',
        query: 'Jane tea',
        payload: { query: 'Jane tea', user_id: 'jane', search_mode: 'keyword' },
        created_at: expect.any(String),
      });
      const page2 = await history({ page: 2, page_size: 2 });
      expect(page2.body).toMatchObject({ page: 2, page_size: 2, total: 3, has_more: false });
      expect(page2.body.results.map((r: { query: string }) => r.query)).toEqual(['Jane Paris']);
      const page1 = await history({ page: 1, page_size: 2 });
      expect(page1.body.has_more).toBe(true);
    });

    it('filters by owner and since', async () => {
      const bob = await history({ owner_id: 'bob' });
      expect(bob.body.results.map((r: { query: string }) => r.query)).toEqual(['hospital']);
      expect((await history({ owner_id: 'jane', owner_type: 'team' })).body.total).toBe(0);
      const recent = await history({ since });
      expect(recent.body.results.map((r: { query: string }) => r.query)).toEqual(['Jane tea']);
    });

    it('never shows another workspace’s searches', async () => {
      const theirs = await history({}, other);
      expect(theirs.body.results.map((r: { query: string }) => r.query)).toEqual(['Rome']);
    });

    it('refuses bad input with a 400 envelope', async () => {
      const cases: Array<Record<string, string | number>> = [
        { page: 0 },
        { page: 'x' },
        { page_size: 101 },
        { since: 'yesterday' },
        { owner_type: 'robot' },
        { unknown: 1 },
      ];
      for (const query of cases) {
        const res = await history(query);
        expect(res.status, JSON.stringify(query)).toBe(400);
        expect(res.body).toMatchObject({
          error: { code: 'BAD_REQUEST' },
          request_id: expect.any(String),
        });
      }
    });
  });

  describe('POST /v1/search/replay', () => {
    it('returns the same results as the original search, with the query id', async () => {
      const body = { query: 'Jane hospital nurse', user_id: 'jane', top_k: 3 };
      const original = await search(body);
      expect(original.status).toBe(200);
      expect(original.body.results.length).toBeGreaterThan(0);
      await t.deps.background.drain();
      const [saved] = await t.database.db
        .select()
        .from(savedSearches)
        .where(eq(savedSearches.requestId, original.headers['x-request-id']!));
      expect(saved).toBeDefined();

      const replayed = await replay({ query_id: saved!.id });
      expect(replayed.status).toBe(200);
      const { query_id, ...response } = replayed.body;
      expect(query_id).toBe(saved!.id);
      expect(response).toEqual(original.body);
      // A replay is not saved again.
      await t.deps.background.drain();
      const rows = await t.database.db
        .select()
        .from(savedSearches)
        .where(eq(savedSearches.query, 'Jane hospital nurse'));
      expect(rows).toHaveLength(1);
    });

    it('is metered like a search', async () => {
      const saved = (await history({ owner_id: 'bob' })).body.results[0];
      const usage = async () =>
        (await request(t.app).get('/v1/usage/today').set('x-api-key', t.tenant.apiKey)).body;
      await t.deps.background.drain();
      await t.deps.quota.drain?.();
      const before = await usage();
      expect((await replay({ query_id: saved.query_id })).status).toBe(200);
      await t.deps.background.drain();
      await t.deps.quota.drain?.();
      const after = await usage();
      expect(after.reads).toBe(before.reads + 1);
    });

    it('treats another workspace’s query id as missing (404), and refuses bad input (400)', async () => {
      const theirs = (await history({}, other)).body.results[0];
      const res = await replay({ query_id: theirs.query_id });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      expect((await replay({ query_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
      for (const body of [{}, { query_id: 'nope' }, { query_id: theirs.query_id, extra: 1 }]) {
        const bad = await replay(body);
        expect(bad.status).toBe(400);
        expect(bad.body.error.code).toBe('BAD_REQUEST');
      }
    });
  });

  describe('POST /v1/context/feedback', () => {
    let contextRequestId: string;
    let cited: string[];
    beforeAll(async () => {
      const res = await request(t.app)
        .post('/v1/context')
        .set('x-api-key', t.tenant.apiKey)
        .send({ query: 'Jane Paris cat', user_id: 'jane', top_k: 2 });
      expect(res.status).toBe(200);
      contextRequestId = res.headers['x-request-id']!;
      cited = res.body.citations.map((c: { memory_id: string }) => c.memory_id);
      expect(cited[0]).toBe(ids.paris);
    });

    it('stores a row and applies the rating like POST /v1/feedback', async () => {
      const score = async (id: string) =>
        (await t.database.db.select().from(memories).where(eq(memories.id, id)))[0]!.feedbackScore;
      const before = await score(ids.paris!);
      const res = await feedback({
        request_id: contextRequestId,
        rating: 'positive',
        helpful_memory_ids: [ids.paris],
        unhelpful_memory_ids: [ids.tea],
        comment: 'The cat was the point',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        feedback_id: expect.any(String),
        request_id: contextRequestId,
        rating: 'positive',
        applied: cited.length,
        helpful_memory_ids: [ids.paris],
        unhelpful_memory_ids: [ids.tea],
        comment: 'The cat was the point',
        created_at: expect.any(String),
      });
      expect(await score(ids.paris!)).toBeCloseTo(before + 1);
      const rows = await feedbackRows();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ requestId: contextRequestId, rating: 'positive' });

      // Without a rating: a row, and no change to ranking.
      const note = await feedback({ request_id: contextRequestId, comment: 'second thoughts' });
      expect(note.status).toBe(200);
      expect(note.body).toMatchObject({ rating: null, applied: 0, helpful_memory_ids: [] });
      expect(await score(ids.paris!)).toBeCloseTo(before + 1);
      expect(await feedbackRows()).toHaveLength(2);
    });

    it('answers 404 for an unknown request id, a search’s request id, or another workspace’s memory', async () => {
      const before = (await feedbackRows()).length;
      const searched = await search({ query: 'Jane', user_id: 'jane' }, t.tenant, false);
      const theirContext = await request(t.app)
        .post('/v1/context')
        .set('x-api-key', other.apiKey)
        .send({ query: 'Rome', user_id: 'jane' });
      for (const body of [
        { request_id: 'no-such-request', rating: 'negative' },
        { request_id: searched.headers['x-request-id'], rating: 'negative' },
        { request_id: searched.headers['x-request-id'], comment: 'x' },
        { request_id: theirContext.headers['x-request-id'], rating: 'negative' },
        { request_id: contextRequestId, helpful_memory_ids: [ids.foreign] },
      ]) {
        const res = await feedback(body);
        expect(res.status, JSON.stringify(body)).toBe(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
      }
      expect(await feedbackRows()).toHaveLength(before);
    });

    it('refuses bad input with a 400 envelope and writes nothing', async () => {
      const before = (await feedbackRows()).length;
      for (const body of [
        {},
        { request_id: contextRequestId },
        { request_id: contextRequestId, rating: 'meh' },
        { request_id: contextRequestId, helpful_memory_ids: ['x'] },
        {
          request_id: contextRequestId,
          helpful_memory_ids: [ids.paris],
          unhelpful_memory_ids: [ids.paris],
        },
        { request_id: contextRequestId, comment: 'x'.repeat(2001) },
        { request_id: contextRequestId, comment: 'ok', extra: true },
        { request_id: '', rating: 'positive' },
      ]) {
        const res = await feedback(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body).toMatchObject({
          error: { code: 'BAD_REQUEST' },
          request_id: expect.any(String),
        });
      }
      expect(await feedbackRows()).toHaveLength(before);
    });
  });
});

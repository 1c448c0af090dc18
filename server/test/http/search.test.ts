import { eq, sql } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  learningSignals,
  memories,
  memoryLinks,
  savedSearches,
} from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

interface Result {
  chunk_id: string;
  memory_id: string;
  chunk_index: number;
  text: string;
  score: number;
  _explain?: {
    match_sources: string[];
    rrf_score: number;
    vector_score?: number;
    text_score?: number;
  };
}

describeDb('POST /v1/search, /v1/context and /v1/feedback', () => {
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
  const search = (
    body: object,
    tenant: TestTenant = t.tenant,
    headers: Record<string, string> = {},
  ) => request(t.app).post('/v1/search').set('x-api-key', tenant.apiKey).set(headers).send(body);
  const texts = (res: { body: { results: Result[] } }) => res.body.results.map((r) => r.text);

  beforeAll(async () => {
    t = await createTestApp({ MNEMO_SEARCH_EXPLAIN: 'true' });
    other = await t.addTenant('other');
    await write('paris', {
      text: 'Jane lives in Paris with her cat Milo',
      user_id: 'jane',
      memory_type: 'fact',
      metadata: { topic: 'home', source: 'chat' },
    });
    await write('nurse', {
      text: 'Jane works as a nurse at the city hospital',
      user_id: 'jane',
      memory_type: 'fact',
      metadata: { topic: 'work', source: 'form' },
    });
    await write('tea', {
      text: 'Jane prefers green tea over coffee in the morning',
      user_id: 'jane',
      memory_type: 'preference',
      metadata: { topic: 'food', source: 'chat' },
    });
    await write('trip', {
      text: 'Jane is planning a trip to Lisbon in June',
      user_id: 'jane',
      memory_type: 'event',
    });
    await write('bob', { text: 'Bob lives in Oslo and works at the hospital', user_id: 'bob' });
    await write('team', {
      text: 'The Jane team lives in Paris offices',
      user_id: 'jane',
      owner_type: 'team',
    });
    await write(
      'foreign',
      { text: 'Jane lives in Paris according to another workspace', user_id: 'jane' },
      other,
    );
  });
  afterAll(async () => t?.close());

  describe('search modes', () => {
    it('hybrid finds by meaning and by words, best first, scores in 0..1', async () => {
      const res = await search({ query: 'Where does Jane live?', user_id: 'jane' });
      expect(res.status).toBe(200);
      expect(res.body.results[0].memory_id).toBe(ids.paris);
      expect(res.body.results[0]._explain.match_sources).toEqual(['vector', 'text']);
      for (const r of res.body.results as Result[]) expect(r.score).toBeGreaterThanOrEqual(0);
      for (const r of res.body.results as Result[]) expect(r.score).toBeLessThanOrEqual(1);
      const scores = (res.body.results as Result[]).map((r) => r.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(res.body).toMatchObject({ page: 1, page_size: 10, has_more: false });
    });

    it('keyword finds only memories that contain the words', async () => {
      const res = await search({ query: 'hospital', user_id: 'jane', search_mode: 'keyword' });
      expect(texts(res)).toEqual(['Jane works as a nurse at the city hospital']);
      expect(res.body.results[0]._explain.match_sources).toEqual(['text']);
      const none = await search({ query: 'submarine', user_id: 'jane', search_mode: 'keyword' });
      expect(none.body).toMatchObject({ results: [], total: 0, has_more: false });
    });

    it('vector ranks by embedding similarity only', async () => {
      const res = await search({
        query: 'hospitals and nursing',
        user_id: 'jane',
        search_mode: 'vector',
      });
      expect(res.body.results[0].memory_id).toBe(ids.nurse);
      expect(
        (res.body.results as Result[]).every((r) => r._explain?.match_sources.join() === 'vector'),
      ).toBe(true);
    });
  });

  describe('isolation and lifecycle', () => {
    it('never returns another owner’s, owner type’s or workspace’s memories', async () => {
      const jane = await search({
        query: 'lives in Paris Oslo hospital',
        user_id: 'jane',
        top_k: 20,
      });
      const seen = (jane.body.results as Result[]).map((r) => r.memory_id);
      expect(seen).not.toContain(ids.bob);
      expect(seen).not.toContain(ids.team);
      expect(seen).not.toContain(ids.foreign);
      const team = await search({ query: 'lives in Paris', user_id: 'jane', owner_type: 'team' });
      expect((team.body.results as Result[]).map((r) => r.memory_id)).toEqual([ids.team]);
      const foreign = await search({ query: 'lives in Paris', user_id: 'jane' }, other);
      expect((foreign.body.results as Result[]).map((r) => r.memory_id)).toEqual([ids.foreign]);
    });

    it('leaves replaced memories out and ranks expired ones (history) below current truth', async () => {
      const old = await write('gym-old', {
        text: 'Kim goes to the gym on Mondays',
        user_id: 'kim',
      });
      const current = await write('gym-new', {
        text: 'Kim goes to the gym on Thursdays now',
        user_id: 'kim',
        replaces_memory_id: old,
      });
      await write('expired', { text: 'Kim is at the gym this week only', user_id: 'kim' });
      await t.database.db
        .update(memories)
        .set({ expiresAt: new Date(Date.now() - 60_000) })
        .where(eq(memories.id, ids.expired!));
      // A search that is not about a time still finds history, after current truth (see
      // lifecycle/history.test.ts).
      const res = await search({ query: 'Kim goes to the gym', user_id: 'kim' });
      expect((res.body.results as Result[]).map((r) => r.memory_id)).toEqual([
        current,
        ids.expired,
      ]);
    });
  });

  describe('filters', () => {
    it('filters by one memory type or several (OR)', async () => {
      const one = await search({
        query: 'Jane',
        user_id: 'jane',
        filters: { memory_type: 'preference' },
      });
      expect(texts(one)).toEqual(['Jane prefers green tea over coffee in the morning']);
      const two = await search({
        query: 'Jane',
        user_id: 'jane',
        filters: { memory_type: ['preference', 'event'] },
      });
      expect(texts(two).sort()).toEqual([
        'Jane is planning a trip to Lisbon in June',
        'Jane prefers green tea over coffee in the morning',
      ]);
    });

    it('filters by metadata with and/or', async () => {
      const and = await search({
        query: 'Jane',
        user_id: 'jane',
        filters: { metadata: { source: 'chat', topic: 'home' } },
      });
      expect((and.body.results as Result[]).map((r) => r.memory_id)).toEqual([ids.paris]);
      const or = await search({
        query: 'Jane',
        user_id: 'jane',
        filters: { metadata: { topic: 'work', source: 'nowhere' }, filter_mode: 'or' },
      });
      expect((or.body.results as Result[]).map((r) => r.memory_id)).toEqual([ids.nurse]);
      const chat = await search({
        query: 'Jane',
        user_id: 'jane',
        filters: { metadata: { source: 'chat' } },
      });
      expect((chat.body.results as Result[]).map((r) => r.memory_id).sort()).toEqual(
        [ids.paris, ids.tea].sort(),
      );
    });

    it('filters by the time a memory is about: effective_at, else created_at', async () => {
      await t.database.db
        .update(memories)
        .set({ createdAt: new Date('2025-01-15T00:00:00Z') })
        .where(eq(memories.id, ids.trip!));
      const before = await search({
        query: 'Jane',
        user_id: 'jane',
        filters: { end_time: '2025-12-31T23:59:59Z' },
      });
      expect((before.body.results as Result[]).map((r) => r.memory_id)).toEqual([ids.trip]);
      const after = await search({
        query: 'Jane',
        user_id: 'jane',
        filters: { start_time: '2026-01-01' },
      });
      expect((after.body.results as Result[]).map((r) => r.memory_id)).not.toContain(ids.trip);
      expect(after.body.total).toBe(3);

      // Written now about 2024 (an imported conversation, say): its effective_at decides.
      const about2024 = { effectiveAt: new Date('2024-06-01T00:00:00Z') };
      await t.database.db.update(memories).set(about2024).where(eq(memories.id, ids.tea!));
      try {
        const in2024 = await search({
          query: 'Jane',
          user_id: 'jane',
          filters: { start_time: '2024-01-01', end_time: '2024-12-31T23:59:59Z' },
        });
        expect((in2024.body.results as Result[]).map((r) => r.memory_id)).toEqual([ids.tea]);
        const listed = await request(t.app)
          .get('/v1/memories')
          .set('x-api-key', t.tenant.apiKey)
          .query({ user_id: 'jane', start_time: '2024-01-01', end_time: '2024-12-31T23:59:59Z' });
        expect(listed.status).toBe(200);
        expect(listed.body.results.map((m: { id: string }) => m.id)).toEqual([ids.tea]);
        const recent = await search({
          query: 'Jane',
          user_id: 'jane',
          filters: { start_time: '2026-01-01' },
        });
        expect((recent.body.results as Result[]).map((r) => r.memory_id)).not.toContain(ids.tea);
      } finally {
        await t.database.db
          .update(memories)
          .set({ effectiveAt: null })
          .where(eq(memories.id, ids.tea!));
      }
    });

    it('refuses invalid filters with 400 and details', async () => {
      for (const [filters, field] of [
        [{ memory_type: 'gossip' }, 'filters.memory_type'],
        [{ start_time: 'yesterday' }, 'filters.start_time'],
        [{ start_time: '2026-02-01', end_time: '2026-01-01' }, 'filters.end_time'],
        [{ filter_mode: 'xor' }, 'filters.filter_mode'],
        [{ metadata: { a: { b: 1 } } }, 'filters.metadata.a'],
        [{ typo: 1 }, 'filters'],
      ] as const) {
        const res = await search({ query: 'Jane', user_id: 'jane', filters });
        expect(res.status, JSON.stringify(filters)).toBe(400);
        expect(Object.keys(res.body.error.details)).toContain(field);
      }
    });
  });

  describe('paging and min_score', () => {
    beforeAll(async () => {
      for (let i = 0; i < 12; i += 1) {
        await write(`project-${i}`, {
          text: `Project milestone ${i}: the pager team shipped release ${i}`,
          user_id: 'pager',
        });
      }
    });

    it('pages consistently through every result', async () => {
      const pages = await Promise.all(
        [1, 2, 3].map((page) =>
          search({ query: 'project milestone release', user_id: 'pager', page, page_size: 5 }),
        ),
      );
      expect(pages.map((p) => p.body.results.length)).toEqual([5, 5, 2]);
      expect(pages.map((p) => p.body.has_more)).toEqual([true, true, false]);
      expect(pages.map((p) => p.body.total)).toEqual([12, 12, 12]);
      const all = pages.flatMap((p) => (p.body.results as Result[]).map((r) => r.memory_id));
      expect(new Set(all).size).toBe(12);
      const top5 = await search({ query: 'project milestone release', user_id: 'pager', top_k: 5 });
      expect((top5.body.results as Result[]).map((r) => r.memory_id)).toEqual(all.slice(0, 5));
      const beyond = await search({
        query: 'project milestone release',
        user_id: 'pager',
        page: 4,
        page_size: 5,
      });
      expect(beyond.body).toMatchObject({ results: [], total: 12, has_more: false });
    });

    it('drops results under min_score', async () => {
      const all = await search({ query: 'Jane nurse hospital', user_id: 'jane' });
      const scores = (all.body.results as Result[]).map((r) => r.score);
      const cut = (scores[0]! + scores[scores.length - 1]!) / 2;
      const strict = await search({
        query: 'Jane nurse hospital',
        user_id: 'jane',
        min_score: cut,
      });
      expect(strict.body.results.length).toBeGreaterThan(0);
      expect(strict.body.results.length).toBeLessThan(all.body.results.length);
      expect((strict.body.results as Result[]).every((r) => r.score >= cut)).toBe(true);
      expect(strict.body.total).toBe(strict.body.results.length);
    });

    it('precision is stricter than recall', async () => {
      const precision = await search({
        query: 'coffee',
        user_id: 'jane',
        retrieval_profile: 'precision',
      });
      const recall = await search({
        query: 'coffee',
        user_id: 'jane',
        retrieval_profile: 'recall',
      });
      expect(recall.body.total).toBeGreaterThan(precision.body.total);
      expect(precision.body.results[0].memory_id).toBe(ids.tea);
    });
  });

  describe('learning signals and feedback', () => {
    it('records what each search returned under its request id, and saves history on request', async () => {
      const res = await search({ query: 'green tea', user_id: 'jane' }, t.tenant, {
        'x-request-id': 'signal-1',
        'x-save-history': '1',
      });
      await search({ query: 'not saved', user_id: 'jane' }, t.tenant, {
        'x-request-id': 'signal-2',
      });
      await search({ query: 'saved too', user_id: 'jane' }, t.tenant, {
        'x-request-id': 'signal-3',
        'x-save-history': 'true',
      });
      await t.deps.background.drain();
      const [signal] = await t.database.db
        .select()
        .from(learningSignals)
        .where(eq(learningSignals.requestId, 'signal-1'));
      expect(signal).toMatchObject({
        route: 'search',
        ownerId: 'jane',
        query: 'green tea',
        workspaceId: t.tenant.workspaceId,
      });
      expect(signal?.results.map((r) => r.memoryId)).toEqual(
        (res.body.results as Result[]).map((r) => r.memory_id),
      );
      const history = await t.database.db
        .select()
        .from(savedSearches)
        .where(eq(savedSearches.workspaceId, t.tenant.workspaceId));
      expect(history.map((h) => h.query).sort()).toEqual(['green tea', 'saved too']);
    });

    it('moves later rankings with explicit feedback, within bounds', async () => {
      await write('cook-a', { text: 'Leo cooks pasta with tomato sauce', user_id: 'leo' });
      await write('cook-b', { text: 'Leo cooks pasta with pesto sauce', user_id: 'leo' });
      const scoreOf = async (id: string, requestId: string) => {
        const res = await search({ query: 'Leo cooks pasta sauce', user_id: 'leo' }, t.tenant, {
          'x-request-id': requestId,
        });
        return {
          order: (res.body.results as Result[]).map((r) => r.memory_id),
          score: (res.body.results as Result[]).find((r) => r.memory_id === id)?.score ?? 0,
        };
      };
      const before = await scoreOf(ids['cook-a']!, 'fb-0');
      const [top, second] = before.order as [string, string];
      const gap = async (requestId: string) => {
        const res = await search({ query: 'Leo cooks pasta sauce', user_id: 'leo' }, t.tenant, {
          'x-request-id': requestId,
        });
        const score = (id: string) =>
          (res.body.results as Result[]).find((r) => r.memory_id === id)?.score ?? 0;
        return {
          gap: score(top) - score(second),
          order: (res.body.results as Result[]).map((r) => r.memory_id),
        };
      };
      const gapBefore = await gap('fb-gap-0');
      const down = await request(t.app)
        .post('/v1/feedback')
        .set('x-api-key', t.tenant.apiKey)
        .send({ feedback: 'negative', request_id: 'fb-0' });
      expect(down.body).toEqual({ request_id: 'fb-0', feedback: 'negative', applied: 2 });
      const afterOne = await gap('fb-loop-0');
      // The voted top result lost more than the one below it (rank-weighted blame)...
      expect(afterOne.gap).toBeLessThan(gapBefore.gap);
      // ...and within a few more votes on later calls (each blaming whatever came first), the
      // other memory comes first.
      let latest = afterOne;
      for (let vote = 0; vote < 3 && latest.order[0] === top; vote += 1) {
        await request(t.app)
          .post('/v1/feedback')
          .set('x-api-key', t.tenant.apiKey)
          .send({ feedback: 'negative', request_id: `fb-loop-${vote}` });
        latest = await gap(`fb-loop-${vote + 1}`);
      }
      expect(latest.order[0]).toBe(second);

      // Many more votes: bounded, the memory is demoted but still found.
      for (let i = 2; i < 12; i += 1) {
        await scoreOf(top, `fb-${i}`);
        await request(t.app)
          .post('/v1/feedback')
          .set('x-api-key', t.tenant.apiKey)
          .send({ feedback: 'negative', request_id: `fb-${i}` });
      }
      const buried = await scoreOf(top, 'fb-final');
      expect(buried.order).toContain(top);
      expect(buried.score).toBeGreaterThan(0.1);
      const [row] = await t.database.db.select().from(memories).where(eq(memories.id, top));
      expect(row?.feedbackScore).toBeGreaterThanOrEqual(-3);

      // A positive vote lifts it again.
      await request(t.app)
        .post('/v1/feedback')
        .set('x-api-key', t.tenant.apiKey)
        .send({ feedback: 'positive', request_id: 'fb-final' });
      const lifted = await scoreOf(top, 'fb-lifted');
      expect(lifted.score).toBeGreaterThan(buried.score);
    });

    it('answers an unknown or foreign request id with 404', async () => {
      const unknown = await request(t.app)
        .post('/v1/feedback')
        .set('x-api-key', t.tenant.apiKey)
        .send({ feedback: 'positive', request_id: 'never-seen' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
      const foreign = await request(t.app)
        .post('/v1/feedback')
        .set('x-api-key', other.apiKey)
        .send({ feedback: 'positive', request_id: 'signal-1' });
      expect(foreign.status).toBe(404);
      const bad = await request(t.app)
        .post('/v1/feedback')
        .set('x-api-key', t.tenant.apiKey)
        .send({ feedback: 'meh', request_id: 'signal-1' });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.error.details)).toEqual(['feedback']);
    });
  });

  describe('context', () => {
    it('numbers blocks so citations point at the right chunks, and adds relevant linked memories', async () => {
      const milo = await write('milo', {
        text: 'Milo the cat is allergic to fish',
        user_id: 'jane',
      });
      const invoice = await write('invoice', {
        text: 'The quarterly invoice is overdue',
        user_id: 'jane',
      });
      await t.database.db.insert(memoryLinks).values([
        { workspaceId: t.tenant.workspaceId, sourceMemoryId: ids.paris!, targetMemoryId: milo },
        { workspaceId: t.tenant.workspaceId, sourceMemoryId: invoice, targetMemoryId: ids.paris! },
      ]);
      const res = await request(t.app)
        .post('/v1/context')
        .set('x-api-key', t.tenant.apiKey)
        .send({ query: 'Jane cat Milo', user_id: 'jane', top_k: 1 });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, page_size: 1, context_blocks: 2, has_more: true });
      expect(res.body.citations).toEqual([
        { i: 1, chunk_id: expect.any(String), memory_id: ids.paris, chunk_index: 0 },
        { i: 2, chunk_id: expect.any(String), memory_id: milo, chunk_index: 0 },
      ]);
      expect(res.body.context_text).toBe(
        [
          'Relevant memories (most relevant first; cite by number):',
          '[1] Jane lives in Paris with her cat Milo',
          '',
          'Linked memories:',
          '[2] Milo the cat is allergic to fish (linked to [1])',
        ].join('\n'),
      );
    });

    it('answers an empty context when nothing matches', async () => {
      const res = await request(t.app)
        .post('/v1/context')
        .set('x-api-key', t.tenant.apiKey)
        .send({ query: 'submarine', user_id: 'jane', search_mode: 'keyword' });
      expect(res.body).toEqual({
        context_text: '',
        citations: [],
        context_blocks: 0,
        page: 1,
        page_size: 10,
        total: 0,
        has_more: false,
      });
    });
  });

  it('still answers when the learning-signal storage is unavailable', async () => {
    await t.deps.background.drain();
    await t.database.db.execute(sql`alter table learning_signals rename to learning_signals_away`);
    try {
      const res = await search({ query: 'Jane', user_id: 'jane' });
      expect(res.status).toBe(200);
      expect(res.body.results.length).toBeGreaterThan(0);
      await t.deps.background.drain();
    } finally {
      await t.database.db.execute(
        sql`alter table learning_signals_away rename to learning_signals`,
      );
    }
  });
});

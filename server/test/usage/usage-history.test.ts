import { MemoryBreakdownResponse, UsageHistoryResponse } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

const today = () => new Date().toISOString().slice(0, 10);

describeDb('GET /v1/usage/history and /v1/usage/memories (the console charts)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  const get = (path: string, who: TestTenant = tenant) =>
    request(t.app).get(path).set('x-api-key', who.apiKey);

  beforeAll(async () => {
    t = await createTestApp({ MNEMO_LIMITS: 'on' });
    tenant = await t.addTenant('charts');
    other = await t.addTenant('elsewhere');
    for (const [text, user_id] of [
      ['Asha likes green tea', 'asha'],
      ['Asha works in Pune', 'asha'],
      ['Ben plays chess on Sundays', 'ben'],
    ]) {
      const res = await request(t.app)
        .post('/v1/memories')
        .set('x-api-key', tenant.apiKey)
        .send({ text, user_id });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const search = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', tenant.apiKey)
      .send({ query: 'tea', user_id: 'asha' });
    expect(search.status).toBe(200);
  }, 120_000);
  afterAll(async () => t?.close());

  it('returns every day of the window, oldest first, today with what was metered', async () => {
    const res = await get('/v1/usage/history');
    expect(res.status).toBe(200);
    const body = UsageHistoryResponse.strict().parse(res.body);
    expect(body.days).toHaveLength(30);
    const days = body.days.map((d) => d.day);
    expect([...days].sort()).toEqual(days);
    const last = body.days.at(-1)!;
    expect(last).toMatchObject({ day: today(), writes: 3, reads: 1 });
    expect(last.embeds).toBeGreaterThanOrEqual(4);
    // The audit log records each request after it ends: the three writes and the search at least.
    await expect
      .poll(async () => (await get('/v1/usage/history?days=1')).body.days[0].requests)
      .toBeGreaterThanOrEqual(4);
    expect(body.days.slice(0, -1).every((d) => d.writes === 0 && d.requests === 0)).toBe(true);
  });

  it('bounds the window and keeps each workspace to its own usage', async () => {
    expect((await get('/v1/usage/history?days=0')).status).toBe(400);
    expect((await get('/v1/usage/history?days=91')).status).toBe(400);
    expect((await get('/v1/usage/history?days=7&x=1')).status).toBe(400);
    const mine = await get('/v1/usage/history?days=7', other);
    expect(mine.status).toBe(200);
    expect(mine.body.days).toHaveLength(7);
    expect(mine.body.days.at(-1)).toMatchObject({ writes: 0, reads: 0 });
  });

  it('counts memories by lifecycle state and by owner, largest first', async () => {
    const res = await get('/v1/usage/memories');
    expect(res.status).toBe(200);
    expect(MemoryBreakdownResponse.strict().parse(res.body)).toEqual({
      total: 3,
      by_state: { active: 3, replaced: 0, archived: 0 },
      by_owner: [
        { owner_id: 'asha', owner_type: 'user', total: 2, active: 2 },
        { owner_id: 'ben', owner_type: 'user', total: 1, active: 1 },
      ],
      owners: 2,
    });
    const empty = await get('/v1/usage/memories', other);
    expect(empty.body).toMatchObject({ total: 0, by_owner: [], owners: 0 });
  });

  it('lists the memories extracted from a parent (none here), and rejects a bad parent id', async () => {
    const parent = (await get('/v1/memories?user_id=asha')).body.results[0].id as string;
    const children = await get(`/v1/memories?user_id=asha&parent_memory_id=${parent}`);
    expect(children.status).toBe(200);
    expect(children.body.total).toBe(0);
    expect((await get('/v1/memories?parent_memory_id=nope')).status).toBe(400);
  });

  it('points GET / at the console: a redirect for a browser, a small JSON for a program', async () => {
    const browser = await request(t.app).get('/').set('accept', 'text/html,*/*;q=0.8');
    expect(browser.status).toBe(302);
    expect(browser.headers.location).toBe('/console/');
    const program = await request(t.app).get('/');
    expect(program.status).toBe(200);
    expect(program.body).toMatchObject({ console: '/console/', openapi: '/v1/openapi.json' });
  });
});

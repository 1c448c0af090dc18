import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

/** Other forms of a word find the memory in every search mode. */
describeDb('search: word forms', () => {
  let t: TestApp;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp();
    for (const [name, text] of [
      ['allergy', 'Jane is allergic to peanuts'],
      ['band', 'Jane plays in a band with two other musicians'],
      ['other', 'Jane bought a concert ticket for Friday'],
    ] as const) {
      const res = await request(t.app)
        .post('/v1/memories')
        .set('x-api-key', t.tenant.apiKey)
        .send({ user_id: 'jane', text, extract: false });
      expect(res.status).toBe(200);
      ids[name] = res.body.memory_id;
    }
  });
  afterAll(async () => t?.close());

  const found = async (query: string, search_mode: string) => {
    const res = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'jane', query, search_mode });
    expect(res.status).toBe(200);
    return (res.body.results as Array<{ memory_id: string }>).map((r) => r.memory_id);
  };

  it.each(['hybrid', 'keyword', 'vector'])('"allergies" finds "allergic" (%s)', async (mode) => {
    expect((await found('allergies', mode))[0]).toBe(ids.allergy);
  });

  it('keyword search finds the other forms only', async () => {
    expect(await found('allergies', 'keyword')).toEqual([ids.allergy]);
  });

  it('"music" finds "musicians", and a shared beginning alone finds nothing', async () => {
    expect(await found('music', 'keyword')).toEqual([ids.band]);
    expect(await found('concern', 'keyword')).toEqual([]);
  });
});

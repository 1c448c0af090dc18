import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asksAboutTime } from '../../src/text/temporal.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const DAY = 86_400_000;
const TOKEN = 'admin-token-0123456789';

describe('asksAboutTime', () => {
  it('tells questions about a time from others', () => {
    expect(asksAboutTime('When did I go to Lisbon?')).toBe(true);
    expect(asksAboutTime('When is Ana going camping?')).toBe(true);
    expect(asksAboutTime('What year did she move?')).toBe(true);
    expect(asksAboutTime('how long ago was the trip')).toBe(true);
    expect(asksAboutTime('Where am I staying?')).toBe(false);
    expect(asksAboutTime('Whenever possible, book trains')).toBe(false);
  });
});

/**
 * Time-bound wording dated in the past ("this week", two months ago) expires on arrival: it is
 * no longer current truth, but it is still the answer to a question about its own time.
 */
describeDb('history: expired memories answer questions about their time', () => {
  let t: TestApp;
  let trip: string;
  let home: string;

  const search = (body: object) =>
    request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'hist', top_k: 10, ...body });
  const found = async (body: object) => {
    const res = await search(body);
    expect(res.status).toBe(200);
    return (res.body.results as Array<{ memory_id: string }>).map((r) => r.memory_id);
  };

  beforeAll(async () => {
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN });
    const write = async (text: string, effectiveAt?: string) => {
      const res = await request(t.app)
        .post('/v1/memories')
        .set('x-api-key', t.tenant.apiKey)
        .send({
          user_id: 'hist',
          text,
          extract: false,
          ...(effectiveAt ? { effective_at: effectiveAt } : {}),
        });
      expect(res.status).toBe(200);
      return res.body.memory_id as string;
    };
    trip = await write(
      "I'm in Lisbon this week for the design conference.",
      new Date(Date.now() - 60 * DAY).toISOString(),
    );
    home = await write('I live in Porto, near the river.');
  });
  afterAll(async () => t?.close());

  it('expires the dated memory on arrival', async () => {
    const res = await request(t.app)
      .get(`/v1/memories/${trip}`)
      .set('x-api-key', t.tenant.apiKey)
      .query({ user_id: 'hist' });
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.expires_at)).toBeLessThan(Date.now());
  });

  it('keeps it out of searches for current truth', async () => {
    expect(await found({ query: 'Lisbon design conference' })).not.toContain(trip);
    expect(await found({ query: 'Where do I live?' })).toContain(home);
  });

  it('finds it for a question about its time, in every search mode', async () => {
    for (const search_mode of ['hybrid', 'keyword', 'vector']) {
      expect(await found({ query: 'When was I in Lisbon?', search_mode })).toContain(trip);
    }
  });

  it('finds it within a time window', async () => {
    const ids = await found({
      query: 'Lisbon design conference',
      filters: { start_time: new Date(Date.now() - DAY).toISOString() },
    });
    expect(ids).toContain(trip);
  });

  it('still finds it once the hygiene job has archived it', async () => {
    const hygiene = await request(t.app)
      .post('/admin/memory-hygiene')
      .set('x-admin-token', TOKEN)
      .query({ workspace_id: t.tenant.workspaceId });
    expect(hygiene.status).toBe(200);
    expect(hygiene.body.expired.memory_ids).toContain(trip);
    expect(await found({ query: 'When was I in Lisbon?' })).toContain(trip);
    expect(await found({ query: 'Lisbon design conference' })).not.toContain(trip);
  });
});

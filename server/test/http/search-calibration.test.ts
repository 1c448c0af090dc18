import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT_CEILING, withEpisodeShare } from '../../src/services/retrieval/episodes.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

interface Result {
  memory_id: string;
  score: number;
}

describe('episode share', () => {
  it('lifts a memory that matches, and caps one that matches nothing', () => {
    expect(withEpisodeShare(0.4, 0.6, 0.5)).toBeGreaterThan(0.4);
    expect(withEpisodeShare(0, 0.7)).toBeLessThanOrEqual(CONTEXT_CEILING);
    expect(withEpisodeShare(0.05, 0.7, 0)).toBeLessThanOrEqual(CONTEXT_CEILING);
    // Never lowers what a memory has on its own.
    expect(withEpisodeShare(0.6, 0.1, 0)).toBeGreaterThanOrEqual(0.6);
  });
});

/**
 * A new user's first memories, written a minute apart, form one episode. Episode context may
 * bring the others along, below the match, but min_score 0.5 keeps only what matches the query.
 */
describeDb('search scores: episode context does not make a match', () => {
  let t: TestApp;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp();
    const start = Date.now() - 10 * 60_000;
    const texts = {
      work: 'I work at Acme as a product designer.',
      sister: 'My sister Ana lives in Madrid.',
      hiking: 'I love hiking in the Alps every summer.',
    };
    let i = 0;
    for (const [name, text] of Object.entries(texts)) {
      const res = await request(t.app)
        .post('/v1/memories')
        .set('x-api-key', t.tenant.apiKey)
        .send({
          user_id: 'newcomer',
          text,
          extract: false,
          effective_at: new Date(start + i * 60_000).toISOString(),
        });
      expect(res.status).toBe(200);
      ids[name] = res.body.memory_id;
      i += 1;
    }
  });
  afterAll(async () => t?.close());

  const search = async (body: object) => {
    const res = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'newcomer', query: 'Where do I work as a designer?', ...body });
    expect(res.status).toBe(200);
    return res.body.results as Result[];
  };

  it('ranks the episode neighbours below the match, scored under 0.5', async () => {
    const results = await search({});
    expect(results[0]?.memory_id).toBe(ids.work);
    expect(results[0]!.score).toBeGreaterThanOrEqual(0.5);
    const sister = results.find((r) => r.memory_id === ids.sister);
    expect(sister).toBeDefined();
    expect(sister!.score).toBeLessThan(0.5);
  });

  it('keeps only the match at min_score 0.5', async () => {
    expect((await search({ min_score: 0.5 })).map((r) => r.memory_id)).toEqual([ids.work]);
  });
});

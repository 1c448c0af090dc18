import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

interface Result {
  memory_id: string;
  text: string;
  score: number;
}

const DAY = 86_400_000;
const at = (days: number) => new Date(Date.UTC(2024, 4, 10) + days * DAY).toISOString();

describeDb('episode context in hybrid search', () => {
  let t: TestApp;
  let off: TestApp;
  const ids: Record<string, string> = {};

  /** One conversation, written turn by turn as a chat app would, with another owner's writes in between. */
  const seed = async (app: TestApp) => {
    const write = async (name: string, body: object) => {
      const res = await request(app.app)
        .post('/v1/memories')
        .set('x-api-key', app.tenant.apiKey)
        .send({ extract: false, ...body });
      expect(res.status).toBe(200);
      ids[name] = res.body.memory_id;
    };
    // Written just before, but two days earlier: another episode.
    await write('puppy', {
      user_id: 'ana',
      text: 'Ana said, "We adopted a puppy called Biscuit."',
      effective_at: at(-2),
      metadata: { speaker: 'Ana' },
    });
    await write('shoes', {
      user_id: 'ana',
      text: 'Ana said, "I bought new shoes last week."',
      effective_at: at(0),
      metadata: { speaker: 'Ana' },
    });
    await write('zed', {
      user_id: 'zed',
      text: 'Zed said, "My new shoes are for the marathon."',
      effective_at: at(0),
    });
    await write('question', {
      user_id: 'ana',
      text: 'Ben said, "For walking or running?"',
      effective_at: at(0),
      metadata: { speaker: 'Ben' },
    });
    await write('answer', {
      user_id: 'ana',
      text: 'Ana said, "Mostly for trail runs on Sundays."',
      effective_at: at(0),
      metadata: { speaker: 'Ana' },
    });
  };
  const search = (app: TestApp, body: object) =>
    request(app.app)
      .post('/v1/search')
      .set('x-api-key', app.tenant.apiKey)
      .send({ user_id: 'ana', top_k: 10, ...body });
  const found = (res: { body: { results: Result[] } }) => res.body.results.map((r) => r.memory_id);

  beforeAll(async () => {
    t = await createTestApp();
    off = await createTestApp({ MNEMO_EPISODE_WINDOW_MINUTES: '0' });
    await seed(t);
  });
  afterAll(async () => {
    await t?.close();
    await off?.close();
  });

  it('brings the turn written next to a strong match, ranked below it', async () => {
    const res = await search(t, { query: 'What are the new shoes for?' });
    expect(res.status).toBe(200);
    const results = res.body.results as Result[];
    expect(results[0]?.memory_id).toBe(ids.shoes);
    const question = results.find((r) => r.memory_id === ids.question);
    expect(question?.text).toBe('Ben said, "For walking or running?"');
    expect(question!.score).toBeLessThan(results[0]!.score);
  });

  it('stays inside the episode, the owner and the search filter', async () => {
    const hybrid = found(await search(t, { query: 'What are the new shoes for?' }));
    // Written just before the match, but dated two days earlier.
    expect(hybrid).not.toContain(ids.puppy);
    // Another owner's memory written between two turns neither appears nor breaks the sequence.
    expect(hybrid).not.toContain(ids.zed);
    const anaOnly = found(
      await search(t, {
        query: 'What are the new shoes for?',
        filters: { metadata: { speaker: 'Ana' } },
      }),
    );
    expect(anaOnly).toContain(ids.shoes);
    expect(anaOnly).not.toContain(ids.question);
  });

  it('belongs to hybrid search in the balanced and recall profiles only', async () => {
    const query = 'What are the new shoes for?';
    expect(found(await search(t, { query, retrieval_profile: 'recall' }))).toContain(ids.question);
    expect(found(await search(t, { query, search_mode: 'keyword' }))).not.toContain(ids.question);
    expect(found(await search(t, { query, retrieval_profile: 'precision' }))).not.toContain(
      ids.question,
    );
  });

  it('is off when the operator sets the episode window to 0', async () => {
    await seed(off);
    const res = found(await search(off, { query: 'What are the new shoes for?' }));
    expect(res).toContain(ids.shoes);
    expect(res).not.toContain(ids.question);
  });
});

import { inArray } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archivePastRetention } from '../../src/db/queries/retention.js';
import { memories } from '../../src/db/schema/index.js';
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
 * no longer current truth, but it is still the answer to a question about its own time. Every
 * search finds it; one that is not about a time ranks it below a current memory of equal
 * relevance.
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
  const results = async (body: object) => {
    const res = await search(body);
    expect(res.status).toBe(200);
    return res.body.results as Array<{ memory_id: string; score: number }>;
  };
  const found = async (body: object) => (await results(body)).map((r) => r.memory_id);
  const write = async (text: string, extra: object = {}) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'hist', text, extract: false, ...extra });
    expect(res.status).toBe(200);
    return res.body.memory_id as string;
  };
  const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

  beforeAll(async () => {
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN });
    trip = await write("I'm in Lisbon this week for the design conference.", {
      effective_at: daysAgo(60).toISOString(),
    });
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

  it('finds it in a search that is not about a time too, in every search mode', async () => {
    for (const search_mode of ['hybrid', 'keyword', 'vector']) {
      expect(await found({ query: 'Lisbon design conference', search_mode })).toContain(trip);
    }
    expect(await found({ query: 'Where do I live?' })).toContain(home);
  });

  it('marks it as history in context, with the day it was said of', async () => {
    const res = await request(t.app)
      .post('/v1/context')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'hist', query: 'Lisbon design conference' });
    expect(res.status).toBe(200);
    const day = daysAgo(60).toISOString().slice(0, 10);
    expect(res.body.context_text).toContain(
      `I'm in Lisbon this week for the design conference. (history, as of ${day})`,
    );
    expect(res.body.context_text).not.toMatch(/Porto, near the river\. \(history/);
  });

  it('ranks it below a current memory of equal relevance, unless the search is about a time', async () => {
    // Twins: the same words and time, in two spaces (no dedupe); one's expiry has passed.
    const at = daysAgo(3).toISOString();
    const text = 'Marta plays the cello in the Harbour Quartet.';
    const current = await write(text, { effective_at: at, namespace: 'twin-a' });
    const expired = await write(text, { effective_at: at, namespace: 'twin-b' });
    await t.database.db
      .update(memories)
      .set({ expiresAt: daysAgo(1) })
      .where(inArray(memories.id, [expired]));
    const scoreOf = (list: Array<{ memory_id: string; score: number }>, id: string) =>
      list.find((r) => r.memory_id === id)?.score;

    for (const search_mode of ['hybrid', 'keyword', 'vector']) {
      const now = await results({ query: 'Marta cello quartet', search_mode });
      const ids = now.map((r) => r.memory_id);
      expect(ids).toContain(expired);
      expect(ids.indexOf(current)).toBeLessThan(ids.indexOf(expired));
      expect(scoreOf(now, expired)).toBeLessThan(scoreOf(now, current)!);

      // A question about a time: history ranks as current truth (equal relevance, equal score).
      const then = await results({
        query: 'When did Marta play cello in the quartet?',
        search_mode,
      });
      expect(scoreOf(then, expired)).toBeCloseTo(scoreOf(then, current)!, 3);
    }
  });

  it('never returns a replaced memory, even for a question about a time', async () => {
    const old = await write('My dentist this week is Dr. Okafor on Rua Augusta.', {
      effective_at: daysAgo(30).toISOString(),
    });
    await write('My dentist is Dr. Lima on Rua Augusta.', { replaces_memory_id: old });
    for (const query of ['dentist Rua Augusta', 'When did I see the dentist on Rua Augusta?']) {
      expect(await found({ query })).not.toContain(old);
    }
  });

  it('finds it for a question about its time, in every search mode', async () => {
    for (const search_mode of ['hybrid', 'keyword', 'vector']) {
      expect(await found({ query: 'When was I in Lisbon?', search_mode })).toContain(trip);
    }
  });

  it('finds it within a time window around the time it was said of, not the time it was written', async () => {
    const around = {
      start_time: daysAgo(61).toISOString(),
      end_time: daysAgo(59).toISOString(),
    };
    expect(await found({ query: 'Lisbon design conference', filters: around })).toEqual([trip]);
    const sinceYesterday = { start_time: daysAgo(1).toISOString() };
    const recent = await found({ query: 'Lisbon design conference', filters: sinceYesterday });
    expect(recent).not.toContain(trip);
  });

  const pinnedContext = async (query: string) => {
    const res = await request(t.app)
      .post('/v1/context')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'hist', query });
    expect(res.status).toBe(200);
    return res.body.context_text as string;
  };

  it('marks a pinned or linked memory that is history as such in context', async () => {
    const pin = await request(t.app)
      .patch('/v1/profile/pins')
      .set('x-api-key', t.tenant.apiKey)
      .send({ owner_id: 'hist', pin: [trip] });
    expect(pin.status).toBe(200);
    const day = daysAgo(60).toISOString().slice(0, 10);
    const pinned = await pinnedContext('Where do I live?');
    expect(pinned).toMatch(
      new RegExp(
        `^Pinned memories[^\\n]*\\n\\[1\\] I'm in Lisbon this week for the design conference\\. \\(history, as of ${day}\\)\\n`,
      ),
    );
    expect(pinned).not.toMatch(/Porto, near the river\. \(history/);

    // Linked to a current hit (and no longer pinned): the same note.
    await request(t.app)
      .patch('/v1/profile/pins')
      .set('x-api-key', t.tenant.apiKey)
      .send({ owner_id: 'hist', unpin: [trip] });
    const link = await request(t.app)
      .post(`/v1/memories/${home}/links`)
      .set('x-api-key', t.tenant.apiKey)
      .send({ target_id: trip, relation: 'related' });
    expect(link.status).toBe(200);
    const res = await request(t.app)
      .post('/v1/context')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'hist', query: 'I live in Porto near the river, not Lisbon', top_k: 1 });
    expect(res.body.context_text).toBe(
      [
        'Relevant memories (most relevant first; cite by number):',
        '[1] I live in Porto, near the river.',
        '',
        'Linked memories:',
        `[2] I'm in Lisbon this week for the design conference. (history, as of ${day}) (linked to [1])`,
      ].join('\n'),
    );
  });

  it('still finds it once the hygiene job has archived it', async () => {
    const pin = await request(t.app)
      .patch('/v1/profile/pins')
      .set('x-api-key', t.tenant.apiKey)
      .send({ owner_id: 'hist', pin: [trip] });
    expect(pin.status).toBe(200);
    const hygiene = await request(t.app)
      .post('/admin/memory-hygiene')
      .set('x-admin-token', TOKEN)
      .query({ workspace_id: t.tenant.workspaceId });
    expect(hygiene.status).toBe(200);
    expect(hygiene.body.expired.memory_ids).toContain(trip);
    expect(await found({ query: 'When was I in Lisbon?' })).toContain(trip);
    expect(await found({ query: 'Lisbon design conference' })).toContain(trip);
    // Pinned before, it stays in context as history (archived by expiry is history, not gone).
    expect(await pinnedContext('Where do I live?')).toMatch(
      /^Pinned memories[^\n]*\n\[1\] I'm in Lisbon this week[^\n]*\(history, as of /,
    );
  });

  it('keeps an expired memory that plan retention archived out of every search', async () => {
    const gig = await write('Tonight I play bass at the Fado bar in Alfama.', {
      effective_at: daysAgo(90).toISOString(),
    });
    const read = await request(t.app)
      .get(`/v1/memories/${gig}`)
      .set('x-api-key', t.tenant.apiKey)
      .query({ user_id: 'hist' });
    expect(Date.parse(read.body.expires_at)).toBeLessThan(Date.now());
    // Old enough for retention, and alone past the cutoff (as POST /admin/memory-retention runs it).
    await t.database.db
      .update(memories)
      .set({ createdAt: daysAgo(400) })
      .where(inArray(memories.id, [gig]));
    const [batch] = await archivePastRetention(t.database.db, {
      policies: [
        {
          workspaceId: t.tenant.workspaceId,
          cutoff: daysAgo(300),
          plan: 'launch',
          retentionDays: 300,
        },
      ],
      limit: 10,
      now: new Date(),
      dryRun: false,
    });
    expect(batch?.archived).toBe(1);
    for (const query of ['bass Fado bar Alfama', 'When did I play bass at the Fado bar?']) {
      for (const search_mode of ['hybrid', 'keyword', 'vector']) {
        expect(await found({ query, search_mode })).not.toContain(gig);
      }
    }
  });
});

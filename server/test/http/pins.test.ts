import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_PINS_PER_OWNER } from '@mnemo/contract';
import { memories, memoryPins } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

describeDb('PATCH and GET /v1/profile/pins, pinned memories first in context', () => {
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
  const patch = (body: object, tenant: TestTenant = t.tenant) =>
    request(t.app).patch('/v1/profile/pins').set('x-api-key', tenant.apiKey).send(body);
  const get = (query: Record<string, string>, tenant: TestTenant = t.tenant) =>
    request(t.app).get('/v1/profile/pins').query(query).set('x-api-key', tenant.apiKey);
  const context = (body: object) =>
    request(t.app).post('/v1/context').set('x-api-key', t.tenant.apiKey).send(body);
  const pinRows = async () =>
    t.database.db.select().from(memoryPins).where(eq(memoryPins.workspaceId, t.tenant.workspaceId));
  const pinnedIds = (res: { body: { pins: Array<{ memory_id: string }> } }) =>
    res.body.pins.map((pin) => pin.memory_id);

  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
    await write('paris', { text: 'Jane lives in Paris with her cat Milo', user_id: 'jane' });
    await write('nurse', { text: 'Jane works as a nurse at the city hospital', user_id: 'jane' });
    await write('vegan', { text: 'Always answer Jane in French, she is vegan', user_id: 'jane' });
    await write('tea', { text: 'Jane prefers green tea in the morning', user_id: 'jane' });
    await write('bob', { text: 'Bob lives in Oslo', user_id: 'bob' });
    await write('janeTeam', {
      text: 'The Jane team ships on Fridays',
      user_id: 'jane',
      owner_type: 'team',
    });
    await write('foreign', { text: 'Jane of another workspace', user_id: 'jane' }, other);
    // Booting and migrating a fresh database takes long on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  it('pins and unpins, idempotently, and lists pins in pin order', async () => {
    const first = await patch({ owner_id: 'jane', pin: [ids.vegan, ids.tea] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      owner_id: 'jane',
      owner_type: 'user',
      pins: [
        {
          memory_id: ids.vegan,
          text: 'Always answer Jane in French, she is vegan',
          lifecycle_state: 'active',
          pinned_at: expect.any(String),
        },
        {
          memory_id: ids.tea,
          text: 'Jane prefers green tea in the morning',
          lifecycle_state: 'active',
          pinned_at: expect.any(String),
        },
      ],
      max_pins: MAX_PINS_PER_OWNER,
    });
    // Pinning again changes nothing; unpinning what is not pinned neither.
    const again = await patch({
      owner_id: 'jane',
      owner_type: 'user',
      pin: [ids.vegan],
      unpin: [ids.nurse],
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    const unpinned = await patch({ owner_id: 'jane', unpin: [ids.tea] });
    expect(pinnedIds(unpinned)).toEqual([ids.vegan]);
    const listed = await get({ owner_id: 'jane' });
    expect(listed.status).toBe(200);
    expect(pinnedIds(listed)).toEqual([ids.vegan]);
    // Another owner (even the same id as a team) has pins of its own.
    expect(pinnedIds(await get({ owner_id: 'jane', owner_type: 'team' }))).toEqual([]);
  });

  it('puts pinned memories first in context, cited like the others, on the first page only', async () => {
    const res = await context({ query: 'Jane Paris cat', user_id: 'jane', top_k: 2 });
    expect(res.status).toBe(200);
    const cited = res.body.citations.map((c: { memory_id: string }) => c.memory_id);
    expect(cited[0]).toBe(ids.vegan);
    expect(cited[1]).toBe(ids.paris);
    expect(res.body.citations[0]).toEqual({
      i: 1,
      chunk_id: expect.any(String),
      memory_id: ids.vegan,
      chunk_index: 0,
    });
    expect(res.body.context_blocks).toBe(res.body.citations.length);
    expect(res.body.context_text.split('\n').slice(0, 5)).toEqual([
      'Pinned memories (cite by number):',
      '[1] Always answer Jane in French, she is vegan',
      '',
      'Relevant memories (most relevant first; cite by number):',
      '[2] Jane lives in Paris with her cat Milo',
    ]);

    // A pinned memory that also ranks is shown once, as a pin.
    const ranked = await context({ query: 'French vegan', user_id: 'jane' });
    const memoryIds = ranked.body.citations.map((c: { memory_id: string }) => c.memory_id);
    expect(memoryIds[0]).toBe(ids.vegan);
    expect(memoryIds.filter((id: string) => id === ids.vegan)).toHaveLength(1);

    const page2 = await context({ query: 'Jane', user_id: 'jane', page: 2, page_size: 1 });
    expect(page2.body.citations.map((c: { memory_id: string }) => c.memory_id)).not.toContain(
      ids.vegan,
    );

    // Other owners' context is untouched by Jane's pins.
    const bob = await context({ query: 'Oslo', user_id: 'bob' });
    expect(bob.body.citations.map((c: { memory_id: string }) => c.memory_id)).toEqual([ids.bob]);
  });

  it('leaves pins of memories that are no longer live out of context', async () => {
    const old = await write('old', { text: 'Jane wants replies in German', user_id: 'jane' });
    await patch({ owner_id: 'jane', pin: [old] });
    await t.database.db
      .update(memories)
      .set({ lifecycleState: 'archived' })
      .where(eq(memories.id, old));
    const res = await context({ query: 'Jane Paris cat', user_id: 'jane' });
    expect(res.body.citations.map((c: { memory_id: string }) => c.memory_id)).not.toContain(old);
    const listed = await get({ owner_id: 'jane' });
    expect(
      listed.body.pins.find((pin: { memory_id: string }) => pin.memory_id === old),
    ).toMatchObject({
      lifecycle_state: 'archived',
    });
    // ...and an archived memory cannot be pinned anew.
    await patch({ owner_id: 'jane', unpin: [old] });
    const refused = await patch({ owner_id: 'jane', pin: [old] });
    expect(refused.status).toBe(404);
  });

  it('refuses another owner’s or another workspace’s memory (404) and changes nothing', async () => {
    const before = await pinRows();
    for (const pin of [[ids.bob], [ids.janeTeam], [ids.foreign], [ids.tea, ids.foreign]]) {
      const res = await patch({ owner_id: 'jane', pin });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({
        error: { code: 'NOT_FOUND' },
        request_id: expect.any(String),
      });
    }
    expect(await pinRows()).toEqual(before);
    // The other workspace sees none of these pins, and cannot unpin them.
    expect(pinnedIds(await get({ owner_id: 'jane' }, other))).toEqual([]);
    const theirs = await patch({ owner_id: 'jane', unpin: [ids.vegan] }, other);
    expect(theirs.status).toBe(200);
    expect(pinnedIds(await get({ owner_id: 'jane' }))).toContain(ids.vegan);
  });

  it('refuses bad input with a 400 envelope and writes nothing', async () => {
    const before = await pinRows();
    for (const body of [
      {},
      { owner_id: 'jane' },
      { owner_id: 'jane', pin: [] },
      { owner_id: 'jane', pin: ['not-a-uuid'] },
      { owner_id: 'jane', pin: [ids.tea], unpin: [ids.tea] },
      { owner_id: 'jane', owner_type: 'robot', pin: [ids.tea] },
      { owner_id: '', pin: [ids.tea] },
      { owner_id: 'jane', pin: ids.tea },
      { owner_id: 'jane', pin: [ids.tea], extra: 1 },
      { owner_id: 'jane', pin: Array.from({ length: MAX_PINS_PER_OWNER + 1 }, () => ids.tea) },
    ]) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({
        error: { code: 'BAD_REQUEST' },
        request_id: expect.any(String),
      });
    }
    expect((await get({})).status).toBe(400);
    expect(await pinRows()).toEqual(before);
  });

  it(`holds at most ${MAX_PINS_PER_OWNER} pins per owner (409, nothing changed)`, async () => {
    const many: string[] = [];
    for (let i = 0; i < MAX_PINS_PER_OWNER; i += 1) {
      // Texts far apart, so that no write is deduplicated into an earlier one.
      const code = createHash('sha256').update(String(i)).digest('hex').slice(0, 16);
      many.push(await write(`many${i}`, { text: `Carol code ${code}`, user_id: 'carol' }));
    }
    const full = await patch({ owner_id: 'carol', pin: many });
    expect(full.status).toBe(200);
    expect(full.body.pins).toHaveLength(MAX_PINS_PER_OWNER);
    const extra = await write('extra', { text: 'Carol prefers window seats', user_id: 'carol' });
    const over = await patch({ owner_id: 'carol', pin: [extra] });
    expect(over.status).toBe(409);
    expect(over.body.error.code).toBe('CONFLICT');
    // Swapping one out for the new one fits.
    const swapped = await patch({ owner_id: 'carol', unpin: [many[0]], pin: [extra] });
    expect(swapped.status).toBe(200);
    expect(pinnedIds(swapped)).toContain(extra);
    expect(pinnedIds(swapped)).not.toContain(many[0]);
  }, 120_000);

  it('deleting a memory drops its pins', async () => {
    const gone = await write('gone', { text: 'Jane likes jazz', user_id: 'jane' });
    await patch({ owner_id: 'jane', pin: [gone] });
    const del = await request(t.app)
      .delete(`/v1/memories/${gone}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(del.status).toBe(200);
    expect((await pinRows()).map((row) => row.memoryId)).not.toContain(gone);
    expect(pinnedIds(await get({ owner_id: 'jane' }))).not.toContain(gone);
  });
});

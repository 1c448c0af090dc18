import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

interface Written {
  memory_id: string;
  deduped?: boolean;
  superseded_memory_id?: string;
  intelligence?: { confidence?: number; conflict_state?: string };
}

interface MemoryView {
  id: string;
  lifecycle_state: string;
  replaced_by_memory_id: string | null;
  expires_at: string | null;
  confidence: number | null;
  claims: Array<{ subject: string; attribute: string; value: string }>;
}

describeDb('memories in other languages (write pipeline)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const write = async (owner: string, text: string): Promise<Written> => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ text, user_id: owner });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Written;
  };
  const state = async (id: string): Promise<MemoryView> => {
    const res = await request(t.app).get(`/v1/memories/${id}`).set('x-api-key', t.tenant.apiKey);
    expect(res.status).toBe(200);
    return res.body as MemoryView;
  };

  it('Hindi: no claims, hedges, expiries or supersessions, and no English reading of its English words', async () => {
    const owner = 'lang-hindi';
    const delhi = await write(owner, 'मैं दिल्ली में रहता हूँ।');
    const mumbai = await write(owner, 'मैं अब मुंबई में रहता हूँ।');
    const mixed = await write(owner, 'मेरा नाम Priya है। मैं maybe next week Mumbai shift हो रही हूँ।');
    // Differs from the first only by a vowel sign: another text, not its duplicate.
    const feminine = await write(owner, 'मैं दिल्ली में रहती हूँ।');

    for (const written of [delhi, mumbai, mixed]) {
      expect(written.superseded_memory_id).toBeUndefined();
      expect(written.deduped ?? false).toBe(false);
      expect(written.intelligence?.confidence).toBe(0.8);
    }
    expect(feminine.memory_id).not.toBe(delhi.memory_id);
    for (const id of [delhi.memory_id, mumbai.memory_id, mixed.memory_id]) {
      const memory = await state(id);
      expect(memory.lifecycle_state).toBe('active');
      expect(memory.claims).toEqual([]);
      expect(memory.expires_at).toBeNull();
      expect(memory.confidence).toBe(0.8);
    }
  });

  it('German: its own claims supersede, nothing else does, and English phrases are not read as English', async () => {
    const owner = 'lang-german';
    const berlin = await write(owner, 'Ich wohne in Berlin.');
    const brother = await write(owner, 'Mein Bruder wohnt in München.');
    const mixed = await write(owner, 'Der Termin war kind of chaotisch, und Maria is married now.');
    const update = await write(owner, 'Update: Die Deadline für den Launch ist Freitag.');
    const hamburg = await write(owner, 'Ich wohne jetzt in Hamburg.');
    const maybe = await write(owner, 'Vielleicht ziehe ich nächstes Jahr nach Wien.');

    for (const written of [brother, mixed, update, maybe]) {
      expect(written.superseded_memory_id).toBeUndefined();
    }
    expect(mixed.intelligence?.confidence).toBe(0.8);
    expect(update.intelligence?.confidence).toBe(0.8);
    expect(maybe.intelligence?.confidence).toBe(0.65);
    expect((await state(mixed.memory_id)).claims).toEqual([]);
    expect((await state(brother.memory_id)).claims).toEqual([]);
    expect((await state(brother.memory_id)).lifecycle_state).toBe('active');

    expect(hamburg.superseded_memory_id).toBe(berlin.memory_id);
    const old = await state(berlin.memory_id);
    expect(old.lifecycle_state).toBe('replaced');
    expect(old.replaced_by_memory_id).toBe(hamburg.memory_id);
    expect((await state(hamburg.memory_id)).claims).toEqual([
      { subject: 'self', attribute: 'residence', value: 'hamburg' },
    ]);
  });

  it('German: children of a German memory are read as German', async () => {
    const owner = 'lang-german-children';
    const parent = await write(owner, 'Ich wohne in Graz. Ich arbeite bei Magna.');
    const res = await request(t.app)
      .get('/v1/memories')
      .query({ user_id: owner, page_size: 100 })
      .set('x-api-key', t.tenant.apiKey);
    const children = (
      res.body.results as Array<MemoryView & { parent_memory_id: string | null; text: string }>
    )
      .filter((memory) => memory.parent_memory_id === parent.memory_id)
      .map((memory) => [memory.text, memory.claims]);
    expect(children.sort()).toEqual([
      ['Ich arbeite bei Magna.', [{ subject: 'self', attribute: 'employer', value: 'magna' }]],
      ['Ich wohne in Graz.', [{ subject: 'self', attribute: 'residence', value: 'graz' }]],
    ]);
  });
});

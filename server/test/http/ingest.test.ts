import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { count, eq } from 'drizzle-orm';
import { auditLog, memories } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { setUsed } from '../usage/support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A Markdown document of `sections` sections, each of `paragraphs` ~600-character paragraphs. */
function bigDocument(sections: number, paragraphs: number): string {
  const parts = ['Intro paragraph of the handbook, before any heading.'];
  for (let s = 0; s < sections; s += 1) {
    parts.push(`## Section ${s}`);
    for (let p = 0; p < paragraphs; p += 1) {
      const sentence = `Paragraph ${p} of section ${s} explains rule ${s}.${p} of the handbook. `;
      parts.push(sentence.repeat(Math.ceil(600 / sentence.length)).trim());
    }
  }
  return parts.join('\n\n');
}

describeDb('conversation and generic ingest', () => {
  let t: TestApp;
  let other: TestTenant;
  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
  });
  afterAll(async () => t?.close());

  const post = (path: string, body: unknown, tenant: TestTenant = t.tenant) =>
    request(t.app)
      .post(path)
      .set('x-api-key', tenant.apiKey)
      .send(body as object);
  const read = (id: string, tenant: TestTenant = t.tenant) =>
    request(t.app).get(`/v1/memories/${id}`).set('x-api-key', tenant.apiKey);
  const memoryRows = async (workspaceId = t.tenant.workspaceId) => {
    const [row] = await t.database.db
      .select({ n: count() })
      .from(memories)
      .where(eq(memories.workspaceId, workspaceId));
    return row!.n;
  };

  describe('POST /v1/memories/conversation', () => {
    it('stores one memory per exchange, attributed, with timestamps as effective_at', async () => {
      const res = await post('/v1/memories/conversation', {
        user_id: 'asha',
        conversation_id: 'chat-1',
        extract: false,
        metadata: { channel: 'web' },
        messages: [
          { role: 'system', content: 'You are a helpful travel assistant.' },
          {
            role: 'user',
            name: 'Asha',
            content: 'I am flying to Lisbon on 3 March.',
            timestamp: '2026-02-01T09:00:00Z',
          },
          {
            role: 'assistant',
            content: 'Noted: Lisbon on 3 March. Window or aisle?',
            timestamp: '2026-02-01T09:00:05Z',
          },
          { role: 'user', name: 'Asha', content: 'Always a window seat, please.' },
          { role: 'assistant', content: 'Window seat it is.' },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        complete: true,
        stored: 2,
        deduped: 0,
        replayed: 0,
        failed: 0,
        skipped: 0,
        messages: 5,
      });
      expect(res.body.turns).toHaveLength(2);
      const [first, second] = res.body.turns;
      expect(first).toMatchObject({ turn: 0, message_start: 0, message_end: 2, status: 'stored' });
      expect(second).toMatchObject({ turn: 1, message_start: 3, message_end: 4, status: 'stored' });
      expect(first.memory_id).toMatch(UUID);
      expect(first.write).toMatchObject({ memory_id: first.memory_id, stored: true });

      const memory = (await read(first.memory_id)).body;
      expect(memory.text).toBe(
        [
          'system: You are a helpful travel assistant.',
          'Asha (user): I am flying to Lisbon on 3 March.',
          'assistant: Noted: Lisbon on 3 March. Window or aisle?',
        ].join('\n'),
      );
      expect(memory.owner_id).toBe('asha');
      expect(memory.effective_at).toBe('2026-02-01T09:00:00.000Z');
      expect(memory.metadata).toEqual({
        channel: 'web',
        ingest: 'conversation',
        conversation_id: 'chat-1',
        turn: 0,
        message_start: 0,
        message_end: 2,
        roles: 'system, user, assistant',
        speakers: 'Asha',
      });
      const later = (await read(second.memory_id)).body;
      expect(later.text).toBe(
        'Asha (user): Always a window seat, please.\nassistant: Window seat it is.',
      );
      expect(later.effective_at).toBeNull();
    });

    it('reads a transcript, one memory per message when asked, leaving out roles not asked for', async () => {
      const res = await post('/v1/memories/conversation', {
        owner_id: 'ravi',
        group_by: 'message',
        roles: ['user', 'assistant'],
        assistant_names: ['Mnemo'],
        extract: false,
        transcript: [
          'System: be brief',
          'Ravi: My daughter starts school in June.',
          'She will take the school bus.',
          'Mnemo: Good to know.',
        ].join('\n'),
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ complete: true, stored: 2, messages: 3 });
      const [user, assistant] = res.body.turns;
      expect(user).toMatchObject({ turn: 0, message_start: 1, message_end: 1 });
      expect(assistant).toMatchObject({ turn: 1, message_start: 2, message_end: 2 });
      const stored = (await read(user.memory_id)).body;
      expect(stored.text).toBe(
        'Ravi (user): My daughter starts school in June.\nShe will take the school bus.',
      );
      expect(stored.metadata).toMatchObject({ roles: 'user', speakers: 'Ravi', turn: 0 });
      expect((await read(assistant.memory_id)).body.text).toBe('Mnemo (assistant): Good to know.');
    });

    it('replays a re-sent conversation under the same key, and stores only what was added', async () => {
      const messages = [
        { role: 'user', content: 'My favourite tea is Assam with no sugar.' },
        { role: 'assistant', content: 'Assam, no sugar: noted.' },
      ];
      const body = { user_id: 'mei', idempotency_key: 'conv-mei-0001', extract: false, messages };
      const first = await post('/v1/memories/conversation', body);
      expect(first.body).toMatchObject({ stored: 1, replayed: 0 });
      const before = await memoryRows();

      const again = await post('/v1/memories/conversation', body);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ complete: true, stored: 0, replayed: 1 });
      expect(again.body.turns[0].memory_id).toBe(first.body.turns[0].memory_id);
      expect(await memoryRows()).toBe(before);

      const grown = await post('/v1/memories/conversation', {
        ...body,
        messages: [
          ...messages,
          { role: 'user', content: 'I moved to a flat in Bandra last week.' },
          { role: 'assistant', content: 'Bandra, got it.' },
        ],
      });
      expect(grown.body).toMatchObject({ stored: 1, replayed: 1, complete: true });
      expect(grown.body.turns.map((turn: { status: string }) => turn.status)).toEqual([
        'replayed',
        'stored',
      ]);
      expect(await memoryRows()).toBe(before + 1);
    });

    it('refuses bad input with the 400 envelope and writes nothing', async () => {
      const before = await memoryRows();
      const cases: unknown[] = [
        {},
        { messages: [] },
        { messages: [{ role: 'narrator', content: 'x' }] },
        { messages: [{ role: 'user', content: '' }] },
        { messages: [{ role: 'user', content: 'hi', timestamp: 'yesterday' }] },
        { transcript: 'a: b', messages: [{ role: 'user', content: 'hi' }] },
        { transcript: 'no speaker on this line\nuser: hi' },
        { transcript: '   ' },
        { messages: [{ role: 'user', content: 'hi' }], user_id: 'a', owner_id: 'b' },
        { messages: [{ role: 'user', content: 'hi' }], idempotency_key: 'short' },
        { messages: [{ role: 'system', content: 'hi' }], roles: ['user'] },
        {
          messages: Array.from({ length: 201 }, () => ({ role: 'user', content: 'hi' })),
        },
        { messages: [{ role: 'user', content: 'x'.repeat(40_001) }] },
        { transcript: `user: ${'word '.repeat(80_001)}` },
      ];
      for (const body of cases) {
        const res = await post('/v1/memories/conversation', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('BAD_REQUEST');
        expect(res.body.request_id).toEqual(expect.any(String));
      }
      expect(await memoryRows()).toBe(before);
    });
  });

  describe('POST /v1/ingest', () => {
    it('splits a large document into sections and pieces, keeping its source on every memory', async () => {
      const text = bigDocument(3, 8);
      const res = await post('/v1/ingest', {
        type: 'document',
        owner_id: 'handbook',
        owner_type: 'app',
        title: 'Staff handbook',
        source: 'https://example.com/handbook.md',
        max_piece_chars: 2000,
        text,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        type: 'document',
        complete: true,
        document_id: expect.stringMatching(/^[0-9a-f]{16}$/),
        sections: 4,
        failed: 0,
      });
      const items: Array<Record<string, unknown>> = res.body.items;
      // The intro, then three sections of about 5000 characters: three pieces each.
      expect(items.map((i) => `${i.section_index}:${i.piece}/${i.pieces}`)).toEqual([
        '0:1/1',
        '1:1/3',
        '1:2/3',
        '1:3/3',
        '2:1/3',
        '2:2/3',
        '2:3/3',
        '3:1/3',
        '3:2/3',
        '3:3/3',
      ]);
      expect(res.body.stored).toBe(items.length);

      const texts: string[] = [];
      for (const item of items) {
        const memory = (await read(item.memory_id as string)).body;
        texts.push(memory.text);
        expect(memory.text.length).toBeLessThanOrEqual(2000);
        expect(memory.chunk_profile).toBe('document');
        expect(memory.owner_id).toBe('handbook');
        expect(memory.metadata).toEqual({
          ingest: 'document',
          document_id: res.body.document_id,
          title: 'Staff handbook',
          source: 'https://example.com/handbook.md',
          section_index: item.section_index,
          section_title: item.section_title,
          piece: item.piece,
          pieces: item.pieces,
        });
        // Extraction is off for documents unless asked for.
        expect(memory.parent_memory_id).toBeNull();
      }
      expect(items[1]!.section_title).toBe('Section 0');
      expect(texts[1]!.startsWith('## Section 0\n\nParagraph 0 of section 0')).toBe(true);
      // Pieces end at paragraph ends: nothing is lost or cut mid-paragraph.
      const paragraphs = text.split('\n\n');
      expect(texts.flatMap((piece) => piece.split('\n\n'))).toEqual(paragraphs);
    });

    it('numbers the sections of a document sent in parts as in one request', async () => {
      const text = bigDocument(2, 1);
      const whole = await post('/v1/ingest', {
        type: 'document',
        user_id: 'parts-whole',
        text,
      });
      const [intro, ...rest] = text.split('\n\n## ');
      const second = `## ${rest.join('\n\n## ')}`;
      const a = await post('/v1/ingest', {
        type: 'document',
        user_id: 'parts',
        document_id: 'doc-1',
        text: intro,
      });
      const b = await post('/v1/ingest', {
        type: 'document',
        user_id: 'parts',
        document_id: 'doc-1',
        section_offset: a.body.sections,
        text: second,
      });
      const label = (item: { section_index: number; section_title: string }) =>
        `${item.section_index}:${item.section_title}`;
      expect([...a.body.items, ...b.body.items].map(label)).toEqual(whole.body.items.map(label));

      // A part that opens with the rest of a section cut for size names that section.
      const continued = await post('/v1/ingest', {
        type: 'document',
        user_id: 'parts',
        document_id: 'doc-1',
        section_offset: 7,
        section_title: 'Chapter 3',
        text: 'More of chapter three.\n\n## Chapter 4\n\nChapter four.',
      });
      expect(continued.body.items.map(label)).toEqual(['7:Chapter 3', '8:Chapter 4']);
    });

    it('dispatches memory and conversation writes to the same pipeline', async () => {
      const memory = await post('/v1/ingest', {
        type: 'memory',
        user_id: 'lee',
        text: 'Lee is allergic to shellfish',
        memory_type: 'fact',
      });
      expect(memory.status).toBe(200);
      expect(memory.body).toMatchObject({
        type: 'memory',
        result: { memory_id: expect.stringMatching(UUID), stored: true },
      });
      const stored = (await read(memory.body.result.memory_id)).body;
      expect(stored).toMatchObject({ text: 'Lee is allergic to shellfish', memory_type: 'fact' });

      const conversation = await post('/v1/ingest', {
        type: 'conversation',
        user_id: 'lee',
        group_by: 'message',
        transcript: 'user: Lee is allergic to shellfish',
      });
      expect(conversation.status).toBe(200);
      expect(conversation.body).toMatchObject({ type: 'conversation', stored: 1, messages: 1 });

      const bad = await post('/v1/ingest', { type: 'video', text: 'x' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('BAD_REQUEST');
      const noText = await post('/v1/ingest', { type: 'document', text: '' });
      expect(noText.status).toBe(400);
    });

    it('reports a refused turn after stored ones as a partial failure; a re-send finishes it', async () => {
      const tenant = await t.addTenant('partial');
      const cap = await t.deps.plans.resolve(tenant.workspaceId).then((plan) => plan.caps.writes);
      // Two writes left today: turns 0 and 1 fit, turn 2 meets the cap.
      await setUsed(t, tenant.workspaceId, 'writes', cap - 2);
      const body = {
        user_id: 'pat',
        group_by: 'message',
        idempotency_key: 'partial-key-01',
        extract: false,
        messages: [
          { role: 'user', content: 'I run every morning at six.' },
          { role: 'user', content: 'I swim on Sundays.' },
          { role: 'user', content: 'I cycle to work on Tuesdays.' },
          { role: 'user', content: 'I do yoga on Friday evenings.' },
        ],
      };
      const partial = await post('/v1/memories/conversation', body, tenant);
      expect(partial.status).toBe(200);
      expect(partial.body).toMatchObject({
        complete: false,
        stored: 2,
        failed: 1,
        skipped: 1,
      });
      expect(partial.body.turns.map((turn: { status: string }) => turn.status)).toEqual([
        'stored',
        'stored',
        'failed',
        'skipped',
      ]);
      expect(partial.body.turns[2].error).toEqual({
        code: 'CAP_EXCEEDED',
        message: expect.any(String),
      });
      expect(await memoryRows(tenant.workspaceId)).toBe(2);

      // Nothing stored at all: the refusal is the answer.
      const refused = await post(
        '/v1/memories/conversation',
        {
          ...body,
          idempotency_key: 'partial-key-02',
          messages: [{ role: 'user', content: 'I play chess on Wednesdays.' }],
        },
        tenant,
      );
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('CAP_EXCEEDED');

      await setUsed(t, tenant.workspaceId, 'writes', 0);
      const resent = await post('/v1/memories/conversation', body, tenant);
      expect(resent.body).toMatchObject({ complete: true, replayed: 2, stored: 2 });
      expect(resent.body.turns[0].memory_id).toBe(partial.body.turns[0].memory_id);
      expect(await memoryRows(tenant.workspaceId)).toBe(4);
    });

    it('keeps workspaces apart: another workspace cannot see or touch ingested memories', async () => {
      const res = await post('/v1/ingest', {
        type: 'conversation',
        user_id: 'secret-owner',
        messages: [{ role: 'user', content: 'My locker code is 4471.' }],
        idempotency_key: 'isolation-key-01',
      });
      const id = res.body.turns[0].memory_id;
      expect((await read(id, other)).status).toBe(404);
      const del = await request(t.app).delete(`/v1/memories/${id}`).set('x-api-key', other.apiKey);
      expect(del.status).toBe(404);
      const list = await request(t.app)
        .get('/v1/memories')
        .query({ user_id: 'secret-owner' })
        .set('x-api-key', other.apiKey);
      expect(list.body.total).toBe(0);
      // The same key in another workspace is another key: it stores there, not replays here.
      const theirs = await post(
        '/v1/ingest',
        {
          type: 'conversation',
          user_id: 'secret-owner',
          messages: [{ role: 'user', content: 'My locker code is 4471.' }],
          idempotency_key: 'isolation-key-01',
        },
        other,
      );
      expect(theirs.body).toMatchObject({ stored: 1, replayed: 0 });
      expect(theirs.body.turns[0].memory_id).not.toBe(id);
      expect((await read(id)).status).toBe(200);
      expect(await memoryRows(other.workspaceId)).toBe(1);
    });

    it('refuses a document that would make more pieces than one request may write', async () => {
      const tenant = await t.addTenant('bounds');
      const paragraph = 'A paragraph long enough to fill a piece on its own. '.repeat(9).trim();
      const text = Array.from({ length: 101 }, () => paragraph).join('\n\n');
      const res = await post(
        '/v1/ingest',
        { type: 'document', text, max_piece_chars: 500 },
        tenant,
      );
      expect(res.status).toBe(400);
      expect(res.body.error.details.text[0]).toMatch(/makes 101 pieces/);
      expect(await memoryRows(tenant.workspaceId)).toBe(0);
    });

    it('audits each stored item under the request id', async () => {
      const res = await post('/v1/memories/conversation', {
        user_id: 'audit-owner',
        group_by: 'message',
        extract: false,
        messages: [
          { role: 'user', content: 'Audit me once.' },
          { role: 'user', content: 'Audit me twice.' },
        ],
      });
      const requestId = String(res.headers['x-request-id']);
      await t.deps.audit.drain();
      const rows = await t.database.db
        .select()
        .from(auditLog)
        .where(eq(auditLog.requestId, requestId));
      expect(rows.map((row) => [row.path, row.status])).toEqual([
        ['/v1/memories/conversation', 200],
        ['/v1/memories/conversation', 200],
      ]);
    });
  });
});

describeDb('ingest size bounds', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_MAX_BODY_BYTES: '4096' });
  });
  afterAll(async () => t?.close());

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const big = await request(t.app)
      .post('/v1/ingest')
      .set('x-api-key', t.tenant.apiKey)
      .send({ type: 'document', text: 'word '.repeat(2000) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const conversation = await request(t.app)
      .post('/v1/memories/conversation')
      .set('x-api-key', t.tenant.apiKey)
      .send({ messages: [{ role: 'user', content: 'word '.repeat(2000) }] });
    expect(conversation.status).toBe(413);
    expect(conversation.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

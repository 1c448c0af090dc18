import { splitDocumentSections } from '@mnemo/contract';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MnemoClient, type IngestProgress } from '../src/index.js';
import { BASE_URL, envelope } from './fixtures.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const client = () =>
  new MnemoClient({ baseUrl: BASE_URL, apiKey: 'test-key', retryBaseMs: 1, maxRetries: 2 });

const written = (id: string) => ({
  memory_id: id,
  stored: true as const,
  extraction: { status: 'skipped' as const, reason: 'user_disabled' as const },
});

/** A document of `n` sections of about `size` characters each. */
function handbook(n: number, size: number): string {
  const sections = ['Opening words before any heading.'];
  for (let i = 0; i < n; i += 1) {
    const paragraph = `Rule ${i} says something worth remembering. `.repeat(size / 44).trim();
    sections.push(`# Chapter ${i}\n\n${paragraph}`);
  }
  return sections.join('\n\n');
}

/**
 * Answers a document request as the server numbers it: one item per section of the text,
 * numbered from `section_offset`, titled `section_title` before the first heading.
 */
function documentAnswer(body: Record<string, unknown>, complete = true) {
  const sections = splitDocumentSections(body.text as string);
  const offset = (body.section_offset as number | undefined) ?? 0;
  const items = sections.map((section, i) => ({
    ...written(`m-${offset + i}`),
    status: 'stored' as const,
    write: written(`m-${offset + i}`),
    section_index: offset + i,
    section_title: section.title || ((body.section_title as string | undefined) ?? ''),
    piece: 1,
    pieces: 1,
  }));
  return {
    type: 'document',
    complete,
    stored: items.length,
    deduped: 0,
    replayed: 0,
    failed: complete ? 0 : 1,
    skipped: 0,
    document_id: (body.document_id as string | undefined) ?? 'server-made',
    sections: sections.length,
    items,
  };
}

describe('client.ingest', () => {
  it('conversation() folds the owner, keeps one idempotency key across retries', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories/conversation`, async ({ request }) => {
        bodies.push((await request.json()) as Record<string, unknown>);
        if (bodies.length === 1)
          return HttpResponse.json(envelope('INTERNAL', 'boom'), { status: 500 });
        return HttpResponse.json({
          complete: true,
          stored: 1,
          deduped: 0,
          replayed: 0,
          failed: 0,
          skipped: 0,
          messages: 2,
          turns: [
            {
              turn: 0,
              message_start: 0,
              message_end: 1,
              status: 'stored',
              memory_id: 'm-1',
              write: written('m-1'),
            },
          ],
        });
      }),
    );
    const result = await client().ingest.conversation({
      ownerId: 'u_42',
      messages: [
        { role: 'user', content: 'I moved to Lisbon.' },
        { role: 'assistant', content: 'Noted.' },
      ],
    });
    expect(result.stored).toBe(1);
    expect(result.turns[0]?.memory_id).toBe('m-1');
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatchObject({ owner_id: 'u_42', messages: expect.any(Array) });
    expect(bodies[0]).not.toHaveProperty('ownerId');
    expect(bodies[0]!.idempotency_key).toEqual(expect.any(String));
    expect(bodies[1]!.idempotency_key).toBe(bodies[0]!.idempotency_key);
  });

  it('document() sends a small document in one request', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/ingest`, async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        bodies.push(body);
        return HttpResponse.json(documentAnswer(body));
      }),
    );
    const text = handbook(2, 500);
    const result = await client().ingest.document({ text, title: 'Handbook', userId: 'ops' });
    expect(bodies).toEqual([
      {
        type: 'document',
        text,
        title: 'Handbook',
        owner_id: 'ops',
        idempotency_key: expect.any(String),
      },
    ]);
    expect(result).toMatchObject({ complete: true, sections: 3, stored: 3 });
  });

  it('document() sends a large one in parts of whole sections, numbered as if sent at once', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/ingest`, async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        bodies.push(body);
        return HttpResponse.json(documentAnswer(body));
      }),
    );
    const text = handbook(12, 3000);
    const progress: IngestProgress[] = [];
    const result = await client().ingest.document(
      { text, source: 'handbook.md' },
      { partChars: 10_000, onProgress: (p) => progress.push(p) },
    );

    expect(bodies.length).toBeGreaterThan(3);
    for (const body of bodies) expect((body.text as string).length).toBeLessThanOrEqual(10_000);
    const keys = new Set(bodies.map((b) => b.idempotency_key));
    const ids = new Set(bodies.map((b) => b.document_id));
    expect(keys.size).toBe(1);
    expect(ids.size).toBe(1);
    // The id is the text's hash, as the server makes it for a document sent whole.
    expect([...ids][0]).toMatch(/^[0-9a-f]{16}$/);

    const whole = splitDocumentSections(text);
    expect(result.sections).toBe(whole.length);
    expect(result.items.map((i) => `${i.section_index}:${i.section_title}`)).toEqual(
      whole.map((s, i) => `${i}:${s.title}`),
    );
    expect(progress.map((p) => `${p.part}/${p.parts}`)).toEqual(
      bodies.map((_, i) => `${i + 1}/${bodies.length}`),
    );
    expect(progress.at(-1)).toMatchObject({ sections: whole.length, items: whole.length });
  });

  it('document() continues a section cut for size under its title', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/ingest`, async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        bodies.push(body);
        return HttpResponse.json(documentAnswer(body));
      }),
    );
    // One chapter of ~50 000 characters: cut into sections of at most 20 000.
    const text = `# Long chapter\n\n${Array.from({ length: 120 }, (_, i) => `Paragraph ${i}. `.repeat(30).trim()).join('\n\n')}`;
    const result = await client().ingest.document({ text }, { partChars: 20_000 });
    expect(bodies.length).toBeGreaterThanOrEqual(3);
    expect(bodies[0]).not.toHaveProperty('section_title');
    expect(bodies.slice(1).every((b) => b.section_title === 'Long chapter')).toBe(true);
    expect(new Set(result.items.map((i) => i.section_title))).toEqual(new Set(['Long chapter']));
    expect(result.items.map((i) => i.section_index)).toEqual(bodies.map((_, i) => i));
  });

  it('document() keeps each part within the pieces one request may store', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/ingest`, async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        bodies.push(body);
        return HttpResponse.json(documentAnswer(body));
      }),
    );
    // 150 short sections: a few thousand characters, under partChars, but 150 pieces.
    const text = Array.from({ length: 150 }, (_, i) => `## Q${i}\n\nAnswer ${i}.`).join('\n\n');
    const result = await client().ingest.document({ text });
    expect(bodies.map((b) => splitDocumentSections(b.text as string).length)).toEqual([100, 50]);
    expect(bodies.map((b) => b.section_offset)).toEqual([undefined, 100]);
    expect(result.sections).toBe(150);
  });

  it('document() stops after a part the server did not complete', async () => {
    let calls = 0;
    server.use(
      http.post(`${BASE_URL}/v1/ingest`, async ({ request }) => {
        calls += 1;
        const body = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json(documentAnswer(body, calls < 2));
      }),
    );
    const result = await client().ingest.document(
      { text: handbook(12, 3000) },
      { partChars: 10_000 },
    );
    expect(calls).toBe(2);
    expect(result.complete).toBe(false);
    expect(result.failed).toBe(1);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryClient } from '@mnemo/client';
import { splitDocumentSections } from '../../contract/src/document-sections.js';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, envelope } from '../../client/test/fixtures.js';
import { ingestConversationFile, parseConversationFile } from '../src/commands/ingest.js';
import { run } from '../src/run.js';

// In-process runs against msw: what the commands send, print and exit with. The server's side of
// these routes is tested end to end in server/test/http/ingest.test.ts.
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const dir = mkdtempSync(join(tmpdir(), 'mnemo-cli-ingest-'));
const fileWith = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env: { HOME: dir, MNEMO_BASE_URL: BASE_URL, MNEMO_API_KEY: 'env-key' },
  });
  return { code, stdout, stderr };
}

const written = (id: string) => ({
  memory_id: id,
  stored: true,
  extraction: { status: 'skipped', reason: 'user_disabled' },
});

function conversationAnswer(turns: number, complete = true) {
  return {
    complete,
    stored: complete ? turns : turns - 1,
    deduped: 0,
    replayed: 0,
    failed: complete ? 0 : 1,
    skipped: 0,
    messages: turns * 2,
    turns: Array.from({ length: turns }, (_, i) =>
      !complete && i === turns - 1
        ? {
            turn: i,
            message_start: 2 * i,
            message_end: 2 * i + 1,
            status: 'failed',
            error: { code: 'CAP_EXCEEDED', message: 'Daily writes cap reached' },
          }
        : {
            turn: i,
            message_start: 2 * i,
            message_end: 2 * i + 1,
            status: 'stored',
            memory_id: `m-${i}`,
            write: written(`m-${i}`),
          },
    ),
  };
}

/** One item per section of the request's text, numbered from its section_offset. */
function documentAnswer(body: Record<string, unknown>) {
  const sections = splitDocumentSections(body.text as string);
  const offset = (body.section_offset as number | undefined) ?? 0;
  const items = sections.map((section, i) => ({
    status: 'stored',
    memory_id: `m-${offset + i}`,
    write: written(`m-${offset + i}`),
    section_index: offset + i,
    section_title: section.title,
    piece: 1,
    pieces: 1,
  }));
  return {
    type: 'document',
    complete: true,
    stored: items.length,
    deduped: 0,
    replayed: 0,
    failed: 0,
    skipped: 0,
    document_id: (body.document_id as string | undefined) ?? 'abc',
    sections: sections.length,
    items,
  };
}

const messages = [
  { role: 'user', content: 'I moved to Lisbon.' },
  { role: 'assistant', content: 'Noted.' },
];

describe('mnemo ingest conversation', () => {
  it('sends the file with the owner and a key made from the content: a re-run sends the same key', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories/conversation`, async ({ request }) => {
        bodies.push((await request.json()) as Record<string, unknown>);
        return HttpResponse.json(conversationAnswer(1));
      }),
    );
    const file = fileWith('chat.json', JSON.stringify({ messages }));
    const first = await cli([
      'ingest',
      'conversation',
      file,
      '--owner-id',
      'u_42',
      '--group-by',
      'message',
    ]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      [
        'stored 1, deduped 0, replayed 0, failed 0, skipped 0 (1 turns of 2 messages)',
        '  turn 0 (messages 0-1): stored m-0',
        '',
      ].join('\n'),
    );
    await cli(['ingest', 'conversation', file, '--owner-id', 'u_42', '--group-by', 'message']);
    expect(bodies[0]).toEqual({
      messages,
      owner_id: 'u_42',
      group_by: 'message',
      idempotency_key: expect.stringMatching(/^conv-[0-9a-f]{40}$/),
    });
    expect(bodies[1]!.idempotency_key).toBe(bodies[0]!.idempotency_key);
  });

  it('reads a text file as a transcript, and an array as messages; --json prints the response', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories/conversation`, async ({ request }) => {
        bodies.push((await request.json()) as Record<string, unknown>);
        return HttpResponse.json(conversationAnswer(1));
      }),
    );
    const transcript = 'user: I moved to Lisbon.\nassistant: Noted.\n';
    const text = await cli(['ingest', 'conversation', fileWith('chat.txt', transcript), '--json']);
    expect(JSON.parse(text.stdout)).toEqual(conversationAnswer(1));
    const array = await cli([
      'ingest',
      'conversation',
      fileWith('chat-array.json', JSON.stringify(messages)),
      '--no-extract',
    ]);
    expect(array.code).toBe(0);
    expect(bodies[0]).toMatchObject({ transcript });
    expect(bodies[1]).toMatchObject({ messages, extract: false });
  });

  it('exits 1 with the failed turn named when the server could not finish', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/memories/conversation`, () =>
        HttpResponse.json(conversationAnswer(2, false)),
      ),
    );
    const { code, stdout } = await cli([
      'ingest',
      'conversation',
      fileWith('chat2.json', JSON.stringify({ messages })),
    ]);
    expect(code).toBe(1);
    expect(stdout).toContain('(incomplete: run the same command again to finish)');
    expect(stdout).toContain('  turn 1: CAP_EXCEEDED: Daily writes cap reached');
  });

  it('reports a file it cannot read or parse', async () => {
    expect(() => parseConversationFile('{ not json')).toThrow(/not valid JSON/);
    const { code, stderr } = await cli(['ingest', 'conversation', join(dir, 'missing.json')]);
    expect(code).toBe(1);
    expect(stderr).toContain('cannot read');
    const usage = await cli(['ingest', 'conversation']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("missing required argument 'file'");
  });

  it('waits out a rate limit (Retry-After) and sends again with the same key', async () => {
    const keys: unknown[] = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories/conversation`, async ({ request }) => {
        keys.push(((await request.json()) as Record<string, unknown>).idempotency_key);
        if (keys.length === 1) {
          return HttpResponse.json(envelope('RATE_LIMITED', 'Rate limit exceeded'), {
            status: 429,
            headers: { 'retry-after': '3' },
          });
        }
        return HttpResponse.json(conversationAnswer(1));
      }),
    );
    const client = new MemoryClient({ baseUrl: BASE_URL, apiKey: 'k', maxRetries: 0 });
    const waits: number[] = [];
    const slept: number[] = [];
    const result = await ingestConversationFile(
      client,
      JSON.stringify({ messages }),
      { extract: true },
      (ms) => waits.push(ms),
      async (ms) => {
        slept.push(ms);
      },
    );
    expect(result.stored).toBe(1);
    expect(waits).toEqual([3000]);
    expect(slept).toEqual([3000]);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
  });
});

describe('mnemo ingest document', () => {
  it('sends a large document in parts with its file name as source and prints the summary', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/ingest`, async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        bodies.push(body);
        return HttpResponse.json(documentAnswer(body));
      }),
    );
    const chapters = Array.from(
      { length: 8 },
      (_, i) => `## Chapter ${i}\n\n${`Chapter ${i} has rules. `.repeat(100).trim()}`,
    );
    const file = fileWith('handbook.md', `# Handbook\n\n${chapters.join('\n\n')}\n`);
    const { code, stdout, stderr } = await cli([
      'ingest',
      'document',
      file,
      '--title',
      'Handbook',
      '--part-chars',
      '5000',
      '--owner-id',
      'support',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(bodies.length).toBeGreaterThan(1);
    for (const body of bodies) {
      expect(body).toMatchObject({
        type: 'document',
        title: 'Handbook',
        source: 'handbook.md',
        owner_id: 'support',
        idempotency_key: expect.stringMatching(/^doc-[0-9a-f]{40}$/),
        document_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      });
      expect((body.text as string).length).toBeLessThanOrEqual(5000);
    }
    expect(stdout).toMatch(
      /^stored 9, deduped 0, replayed 0, failed 0, skipped 0 \(9 pieces in 9 sections, document [0-9a-f]{16}\)\n$/,
    );
  });

  it('draws a progress line on a terminal', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/ingest`, async ({ request }) =>
        HttpResponse.json(documentAnswer((await request.json()) as Record<string, unknown>)),
      ),
    );
    let stderr = '';
    const file = fileWith(
      'two.md',
      `# One\n\n${'a '.repeat(2000)}\n\n# Two\n\n${'b '.repeat(2000)}`,
    );
    const code = await run(['ingest', 'document', file, '--part-chars', '4500'], {
      stdout: { write: () => true },
      stderr: { write: (chunk: string) => (stderr += chunk) },
      env: { HOME: dir, MNEMO_BASE_URL: BASE_URL, MNEMO_API_KEY: 'env-key' },
      isTTY: true,
    });
    expect(code).toBe(0);
    expect(stderr).toContain('part 1/2  sections 1  pieces 1');
    expect(stderr).toContain('part 2/2  sections 2  pieces 2');
  });
});

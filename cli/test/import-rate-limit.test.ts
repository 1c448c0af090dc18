import { MemoryClient } from '@mnemo/client';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, envelope } from '../../client/test/fixtures.js';
import { importRecords, parseImportFile } from '../src/commands/import.js';
import { run } from '../src/run.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const records = parseImportFile(
  ['{"text":"one","user_id":"u"}', '{"text":"two","user_id":"u"}', '{"text":"three"}'].join('\n'),
);

/** The server admits one write per "window" and tells the rest to come back in 2 s. */
function rateLimitedServer(code = 'RATE_LIMITED') {
  let calls = 0;
  let admittedSinceWait = 0;
  let waits = 0;
  server.use(
    http.post(`${BASE_URL}/v1/memories`, () => {
      calls++;
      if (admittedSinceWait >= 1) {
        return HttpResponse.json(envelope(code, 'Rate limit exceeded'), {
          status: 429,
          headers: { 'retry-after': '2' },
        });
      }
      admittedSinceWait++;
      return HttpResponse.json({
        memory_id: crypto.randomUUID(),
        stored: true,
        extraction: { status: 'skipped', reason: 'user_disabled' },
      });
    }),
  );
  return {
    calls: () => calls,
    /** What the import's sleep calls: a wait opens the next window. */
    sleep: async (_ms: number) => {
      waits++;
      admittedSinceWait = 0;
    },
    waits: () => waits,
  };
}

describe('import under rate limits', () => {
  const client = new MemoryClient({ baseUrl: BASE_URL, apiKey: 'k', maxRetries: 0 });

  it('waits out 429 RATE_LIMITED as Retry-After says, and imports every record', async () => {
    const fake = rateLimitedServer();
    const waited: number[] = [];
    const summary = await importRecords(client, 'f.jsonl', records, {
      concurrency: 1,
      defaults: {},
      onWait: (ms) => waited.push(ms),
      sleep: fake.sleep,
    });
    expect(summary).toMatchObject({ total: 3, imported: 3, failed: 0 });
    expect(fake.waits()).toBe(2);
    // Each wait is announced with the server's 2 s, then cleared.
    expect(waited).toEqual([2000, 0, 2000, 0]);
    expect(fake.calls()).toBe(5);
  });

  it('does not wait for a daily cap: CAP_EXCEEDED fails the record', async () => {
    const fake = rateLimitedServer('CAP_EXCEEDED');
    const summary = await importRecords(client, 'f.jsonl', records, {
      concurrency: 1,
      defaults: {},
      sleep: fake.sleep,
    });
    expect(fake.waits()).toBe(0);
    expect(summary).toMatchObject({ imported: 1, failed: 2 });
    expect(summary.failures[0]?.reason).toMatch(/^CAP_EXCEEDED/);
  });
});

describe('mnemo import tells the user why it waits', () => {
  /** The first write is refused once with Retry-After: 1; every later one is admitted. */
  function refusedOnce() {
    const attempts: string[] = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories`, async ({ request }) => {
        const { idempotency_key: key } = (await request.json()) as { idempotency_key: string };
        attempts.push(key);
        if (attempts.length === 1) {
          return HttpResponse.json(envelope('RATE_LIMITED', 'Rate limit exceeded'), {
            status: 429,
            headers: { 'retry-after': '1' },
          });
        }
        return HttpResponse.json({
          memory_id: crypto.randomUUID(),
          stored: true,
          extraction: { status: 'skipped', reason: 'user_disabled' },
        });
      }),
    );
    return attempts;
  }

  async function importFile(isTTY: boolean) {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-import-'));
    const file = join(dir, 'two.jsonl');
    writeFileSync(file, '{"text":"one","user_id":"u"}\n{"text":"two","user_id":"u"}\n');
    let stdout = '';
    let stderr = '';
    const code = await run(['import', file, '--concurrency', '1'], {
      stdout: { write: (chunk: string) => (stdout += chunk) },
      stderr: { write: (chunk: string) => (stderr += chunk) },
      env: { HOME: dir, MNEMO_BASE_URL: BASE_URL, MNEMO_API_KEY: 'k' },
      isTTY,
    });
    return { code, stdout, stderr };
  }

  it('without a terminal: one line saying it waits, how long and why; the client does not retry silently first', async () => {
    const attempts = refusedOnce();
    const started = Date.now();
    const { code, stderr, stdout } = await importFile(false);
    expect(code).toBe(0);
    expect(stderr).toBe(
      'rate limited (429): waiting 1 s as the server asks (Retry-After), then going on\n',
    );
    expect(stdout).toMatch(/imported 2/);
    // One refused attempt, its retry after the wait, the second record: no hidden client retries.
    expect(attempts).toHaveLength(3);
    expect(attempts[1]).toBe(attempts[0]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('on a terminal: the progress bar says it is rate limited and for how long', async () => {
    refusedOnce();
    const { code, stderr } = await importFile(true);
    expect(code).toBe(0);
    expect(stderr).toContain('rate limited (429): waiting 1 s as the server asks');
    expect(stderr).toMatch(/2\/2 +imported 2/);
  });
});

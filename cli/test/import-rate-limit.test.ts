import { MemoryClient } from '@mnemo/client';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, envelope } from '../../client/test/fixtures.js';
import { importRecords, parseImportFile } from '../src/commands/import.js';

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

import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  MemoryClient,
  RateLimitError,
  type ClientOptions,
} from '../src/index.js';
import { backoffDelay, parseRetryAfter, seededRandom } from '../src/internal/backoff.js';
import { BASE_URL, envelope, health } from './fixtures.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

function client(options: ClientOptions = {}) {
  return new MemoryClient({ baseUrl: BASE_URL, apiKey: 'k', retryBaseMs: 1, ...options });
}

/** Answers GET /v1/health with the given responses in turn (the last one repeats). */
function healthSequence(...answers: Array<() => Response | Promise<Response>>) {
  let calls = 0;
  server.use(
    http.get(`${BASE_URL}/v1/health`, () => {
      const answer = answers[Math.min(calls, answers.length - 1)]!;
      calls++;
      return answer();
    }),
  );
  return { calls: () => calls };
}

const ok = () => HttpResponse.json(health);
const unavailable = () => HttpResponse.json(envelope('INTERNAL', 'try later'), { status: 503 });

describe('REST retries', () => {
  it('429 with Retry-After (seconds): waits that long, not the backoff, then succeeds', async () => {
    const { calls } = healthSequence(
      () =>
        HttpResponse.json(envelope('RATE_LIMITED', 'slow down'), {
          status: 429,
          headers: { 'retry-after': '1' },
        }),
      ok,
    );
    const randoms: number[] = [];
    const started = Date.now();
    await expect(
      client({ retryBaseMs: 5, random: () => (randoms.push(1), 0.5) }).health(),
    ).resolves.toEqual(health);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(calls()).toBe(2);
    expect(randoms).toEqual([]); // Retry-After replaced the jittered backoff
  });

  it('a Retry-After beyond 60 s is not waited for: the RateLimitError is thrown at once', async () => {
    const { calls } = healthSequence(() =>
      HttpResponse.json(envelope('CAP_EXCEEDED', 'daily cap'), {
        status: 429,
        headers: { 'retry-after': '3600' },
      }),
    );
    await expect(client().health()).rejects.toBeInstanceOf(RateLimitError);
    expect(calls()).toBe(1);
  });

  it('503 then success: one retry, the result of the second attempt', async () => {
    const { calls } = healthSequence(unavailable, ok);
    await expect(client().health()).resolves.toEqual(health);
    expect(calls()).toBe(2);
  });

  it('a network error then success', async () => {
    const { calls } = healthSequence(() => HttpResponse.error(), ok);
    await expect(client().health()).resolves.toEqual(health);
    expect(calls()).toBe(2);
  });

  it('a timed-out attempt is retried with a fresh timeout', async () => {
    const { calls } = healthSequence(async () => {
      await delay('infinite');
      return ok();
    }, ok);
    await expect(client({ timeoutMs: 50 }).health()).resolves.toEqual(health);
    expect(calls()).toBe(2);
  });

  it('timeouts on every attempt end in APITimeoutError (its own error, code TIMEOUT)', async () => {
    const { calls } = healthSequence(async () => {
      await delay('infinite');
      return ok();
    });
    const error = await client({ timeoutMs: 30, maxRetries: 1 })
      .health()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toMatchObject({ code: 'TIMEOUT' });
    expect(calls()).toBe(2);
  });

  it('the caller signal aborts a pending backoff at once and is never retried', async () => {
    const { calls } = healthSequence(unavailable, ok);
    const controller = new AbortController();
    const started = Date.now();
    const pending = client({ retryBaseMs: 60_000, random: () => 0.99 }).health({
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('user left')), 50);
    const error = await pending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(calls()).toBe(1);
  });

  it('the caller signal aborts an attempt in flight; nothing is retried', async () => {
    const { calls } = healthSequence(async () => {
      await delay('infinite');
      return ok();
    });
    const controller = new AbortController();
    const pending = client({ maxRetries: 5 }).health({ signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(calls()).toBe(1);
  });

  it('retries exhausted: 1 + maxRetries attempts, then the last error', async () => {
    const { calls } = healthSequence(unavailable);
    const error = await client({ maxRetries: 2 })
      .health()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, code: 'INTERNAL', message: 'try later' });
    expect(calls()).toBe(3);
  });

  it('network errors exhausted end in APIConnectionError', async () => {
    const { calls } = healthSequence(() => HttpResponse.error());
    await expect(client({ maxRetries: 1 }).health()).rejects.toBeInstanceOf(APIConnectionError);
    expect(calls()).toBe(2);
  });

  it('a 400 is not retried', async () => {
    const { calls } = healthSequence(() =>
      HttpResponse.json(envelope('BAD_REQUEST', 'no'), { status: 400 }),
    );
    await expect(client().health()).rejects.toBeInstanceOf(BadRequestError);
    expect(calls()).toBe(1);
  });

  it('maxRetries: 0 makes one attempt; a per-call maxRetries overrides the client one', async () => {
    const first = healthSequence(unavailable);
    await expect(client({ maxRetries: 0 }).health()).rejects.toBeInstanceOf(InternalServerError);
    expect(first.calls()).toBe(1);
    const second = healthSequence(unavailable);
    await expect(client({ maxRetries: 0 }).health({ maxRetries: 3 })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(second.calls()).toBe(4);
  });

  it('429 without Retry-After falls back to the jittered backoff', async () => {
    const { calls } = healthSequence(
      () => HttpResponse.json(envelope('RATE_LIMITED', 'slow down'), { status: 429 }),
      ok,
    );
    let draws = 0;
    await client({ random: () => (draws++, 0.5) }).health();
    expect(calls()).toBe(2);
    expect(draws).toBe(1);
  });

  it('retryBaseMs scales the wait: random() * retryBaseMs * 2^n', async () => {
    healthSequence(unavailable, unavailable, ok);
    const started = Date.now();
    // 0.99 * 150 * (1 + 2) ≈ 445 ms in total over the two retries.
    await client({ retryBaseMs: 150, random: () => 0.99 }).health();
    const slow = Date.now() - started;
    expect(slow).toBeGreaterThanOrEqual(400);
    healthSequence(unavailable, unavailable, ok);
    const fastStart = Date.now();
    await client({ retryBaseMs: 150, random: () => 0 }).health();
    expect(Date.now() - fastStart).toBeLessThan(slow);
  });

  it('draws one jittered delay per retry from the injected random, with retryBaseMs * 2^n', async () => {
    healthSequence(unavailable, unavailable, ok);
    const draws: number[] = [];
    const seeded = seededRandom(7);
    await client({
      retryBaseMs: 10,
      random: () => {
        const value = seeded();
        draws.push(value);
        return value;
      },
    }).health();
    expect(draws).toHaveLength(2);
    const replay = seededRandom(7);
    expect(draws).toEqual([replay(), replay()]);
  });
});

describe('backoff', () => {
  it('full jitter stays within [0, retryBaseMs * 2^n) for a seeded random', () => {
    const random = seededRandom(20260121);
    for (let n = 0; n < 6; n++) {
      const ceiling = 200 * 2 ** n;
      const delays = Array.from({ length: 500 }, () => backoffDelay(n, 200, random));
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...delays)).toBeLessThan(ceiling);
      // Full jitter, not partial: the draws spread over the whole range.
      expect(Math.min(...delays)).toBeLessThan(ceiling * 0.1);
      expect(Math.max(...delays)).toBeGreaterThan(ceiling * 0.9);
    }
  });

  it('is exactly random() * retryBaseMs * 2^n at the edges', () => {
    expect(backoffDelay(0, 200, () => 0)).toBe(0);
    expect(backoffDelay(3, 200, () => 0.5)).toBe(800);
    expect(backoffDelay(2, 200, () => 0.999999)).toBe(799);
  });

  it('seededRandom is deterministic', () => {
    const a = seededRandom(1);
    const b = seededRandom(1);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
  });

  it.each([
    ['2', 2000],
    ['0', 0],
    ['0.5', 500],
    ['Wed, 21 Oct 2015 07:28:05 GMT', 5000],
    ['Wed, 21 Oct 2015 07:27:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
  ])('parses Retry-After %j as %s ms', (header, expected) => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter(header, now)).toBe(expected);
  });

  it('honours an HTTP-date Retry-After on a live retry', async () => {
    const { calls } = healthSequence(
      () =>
        HttpResponse.json(envelope('RATE_LIMITED', 'slow down'), {
          status: 429,
          headers: { 'retry-after': new Date(Date.now() + 1500).toUTCString() },
        }),
      ok,
    );
    const started = Date.now();
    await client().health();
    // The date has whole seconds: the wait is between 0.5 and 1.5 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(calls()).toBe(2);
  });
});

describe('idempotent writes', () => {
  const inserted = {
    memory_id: 'm1',
    stored: true,
    extraction: { status: 'skipped', reason: 'none' },
  };

  function writes(...answers: Array<() => Response>) {
    const bodies: Array<Record<string, unknown>> = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories`, async ({ request }) => {
        bodies.push((await request.json()) as Record<string, unknown>);
        return answers[Math.min(bodies.length - 1, answers.length - 1)]!();
      }),
    );
    return bodies;
  }

  it('generates one idempotency key and sends it on every attempt', async () => {
    const bodies = writes(
      unavailable,
      () => HttpResponse.error(),
      () => HttpResponse.json(inserted),
    );
    await expect(
      client().memories.add({ text: 'Jane moved to Berlin', ownerId: 'jane' }),
    ).resolves.toEqual(inserted);
    expect(bodies).toHaveLength(3);
    const key = bodies[0]!.idempotency_key;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(bodies.map((body) => body.idempotency_key)).toEqual([key, key, key]);
    expect(bodies[2]).toEqual({
      text: 'Jane moved to Berlin',
      owner_id: 'jane',
      idempotency_key: key,
    });
  });

  it("keeps the caller's idempotency key", async () => {
    const bodies = writes(unavailable, () => HttpResponse.json(inserted));
    await client().memories.add({ text: 'x', idempotency_key: 'caller-key-0001' });
    expect(bodies.map((body) => body.idempotency_key)).toEqual([
      'caller-key-0001',
      'caller-key-0001',
    ]);
  });

  it('two separate writes get two different keys', async () => {
    const bodies = writes(() => HttpResponse.json(inserted));
    await client().memories.add({ text: 'a' });
    await client().memories.add({ text: 'a' });
    expect(bodies[0]!.idempotency_key).not.toBe(bodies[1]!.idempotency_key);
  });

  it('piiScan sends x-safety-pii-scan: 1', async () => {
    let header: string | null = null;
    server.use(
      http.post(`${BASE_URL}/v1/memories`, ({ request }) => {
        header = request.headers.get('x-safety-pii-scan');
        return HttpResponse.json(inserted);
      }),
    );
    await client().memories.add({ text: 'mail me at a@b.c' }, { piiScan: true });
    expect(header).toBe('1');
  });
});

describe('options', () => {
  it('defaults: maxRetries 2, retryBaseMs 200, transport hybrid', () => {
    const defaults = new MemoryClient({ baseUrl: BASE_URL });
    expect(defaults).toMatchObject({
      maxRetries: 2,
      retryBaseMs: 200,
      transport: 'hybrid',
      timeoutMs: 60_000,
    });
  });

  it('refuses invalid maxRetries, retryBaseMs and transport', () => {
    expect(() => client({ maxRetries: -1 })).toThrow(TypeError);
    expect(() => client({ retryBaseMs: 1.5 })).toThrow(TypeError);
    expect(() => client({ transport: 'grpc' as never })).toThrow(TypeError);
  });

  it('the client-wide signal aborts a pending retry', async () => {
    const { calls } = healthSequence(unavailable, ok);
    const controller = new AbortController();
    const api = client({ signal: controller.signal, retryBaseMs: 60_000, random: () => 0.9 });
    const pending = api.health();
    setTimeout(() => controller.abort(), 30);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(calls()).toBe(1);
  });
});

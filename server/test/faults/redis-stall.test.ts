import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { count, eq, inArray } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memories } from '../../src/db/schema/index.js';
import { createLimitBackend } from '../../src/limits/backend.js';
import { createLogger } from '../../src/logger.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb, testBackend } from '../support/db.js';
import { OwnRedis } from '../support/redis-server.js';
import { startServer, stop, type Started } from '../support/server-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DEADLINE_MS = 400;
const LIMITS_ON = {
  MNEMO_LIMITS: 'on',
  MNEMO_REQUEST_DEADLINE_MS: String(DEADLINE_MS),
};

describeDb('a stalled Redis', () => {
  let redis: OwnRedis;
  beforeAll(async () => {
    redis = await OwnRedis.start();
  });
  afterAll(async () => redis?.stop());

  describe('stalling past the request deadline (a command timeout longer than it)', () => {
    let t: TestApp;
    beforeAll(async () => {
      // Commands wait up to 10 s: the deadline's 503 goes out while the limit checks still wait.
      const limits = await createLimitBackend({
        redisUrl: redis.url,
        keyPrefix: `stall-${randomBytes(4).toString('hex')}`,
        commandTimeoutMs: 10_000,
      });
      t = await createTestApp({ ...LIMITS_ON, REDIS_URL: redis.url }, { limits });
    });
    afterAll(async () => t?.close());

    it('answers 503, writes nothing when Redis resumes, and sets no header on the sent answer', async () => {
      const texts = Array.from(
        { length: 5 },
        (_, i) => `stalled write ${i} ${randomBytes(4).toString('hex')}`,
      );
      redis.pause();
      let answers: request.Response[];
      try {
        answers = await Promise.all([
          ...texts.map((text) =>
            request(t.app)
              .post('/v1/memories')
              .set('x-api-key', t.tenant.apiKey)
              .send({ text, owner_id: 'stall', owner_type: 'user' }),
          ),
          // The per-address limiter on the dashboard routes.
          request(t.app).post('/v1/dashboard/session').send({}),
        ]);
        await sleep(300);
      } finally {
        redis.resume();
      }
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(res.body.error.message).toMatch(/; nothing was written; retry shortly$/);
        expect(res.headers['retry-after']).toBeDefined();
      }
      // The deadline names what a request was waiting on (it blamed the database): Redis for
      // those in their limit checks (on a busy machine a request may still be in auth then).
      const redisNamed = answers.filter(
        (res) =>
          res.body.error.message ===
          'The rate-limit store (Redis) did not answer in time; nothing was written; retry shortly',
      );
      expect(redisNamed.length).toBeGreaterThan(0);
      // The stalled limit checks now complete; before the fence, each went on to its handler
      // (the writes were stored) and the dashboard limiter set headers on the sent 503
      // (ERR_HTTP_HEADERS_SENT, an unhandled rejection, which fails this file).
      await sleep(1_500);
      const [stored] = await t.database.db
        .select({ n: count() })
        .from(memories)
        .where(inArray(memories.text, texts));
      expect(stored!.n).toBe(0);
      // And the service is whole again (a few tries: the 400 ms deadline is tight on a busy
      // machine, and a retry with the same key is what a client does after a 503).
      let after = 0;
      for (let attempt = 0; attempt < 5 && after !== 200; attempt += 1) {
        after = (
          await request(t.app)
            .post('/v1/memories')
            .set('x-api-key', t.tenant.apiKey)
            .send({
              text: `after the stall ${texts[0]}`,
              owner_id: 'stall',
              owner_type: 'user',
              idempotency_key: `after-${texts[0]}`,
            })
        ).status;
      }
      expect(after).toBe(200);
    });
  });

  describe('with the command timeout the deadline gives', () => {
    let t: TestApp;
    const logged: string[] = [];
    beforeAll(async () => {
      t = await createTestApp(
        { ...LIMITS_ON, REDIS_URL: redis.url },
        {
          logger: createLogger(
            'warn',
            new Writable({
              write(chunk: Buffer, _encoding, done) {
                logged.push(...chunk.toString().split('\n').filter(Boolean));
                done();
              },
            }),
          ),
        },
      );
    });
    afterAll(async () => t?.close());

    it('logs the outage as a few throttled warnings, not a line per request', async () => {
      logged.length = 0;
      redis.pause();
      let statuses: number[];
      try {
        // 40 requests, 10 at a time: each fails its limit checks on the command timeout.
        statuses = [];
        for (let wave = 0; wave < 4; wave += 1) {
          const answers = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              request(t.app)
                .post('/v1/search')
                .set('x-api-key', t.tenant.apiKey)
                .send({ query: `outage ${wave} ${i}`, owner_id: 'open', owner_type: 'user' }),
            ),
          );
          statuses.push(...answers.map((res) => res.status));
        }
      } finally {
        redis.resume();
      }
      // Each request waits out a command timeout or two: on a busy machine some reach the
      // deadline (the documented 503); none fails otherwise.
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
      const warnings = logged.filter((line) => /"level":40/.test(line));
      // One line per message per 10 s, each with how many failures it stands for (was 805 in 10 s).
      expect(warnings.length).toBeGreaterThan(0);
      expect(warnings.length).toBeLessThanOrEqual(3);
      expect(logged.filter((line) => /"level":50/.test(line))).toEqual([]);
    });

    it('answers every kind of route while Redis is paused: no 5xx but the documented 503', async () => {
      const key = t.tenant.apiKey;
      const calls = [
        () =>
          request(t.app)
            .post('/v1/memories')
            .set('x-api-key', key)
            .send({ text: 'paused a', owner_id: 'mix' }),
        () =>
          request(t.app)
            .post('/v1/search')
            .set('x-api-key', key)
            .send({ query: 'paused', owner_id: 'mix' }),
        () =>
          request(t.app)
            .post('/v1/context')
            .set('x-api-key', key)
            .send({ query: 'paused', owner_id: 'mix' }),
        () => request(t.app).get('/v1/memories').query({ owner_id: 'mix' }).set('x-api-key', key),
        () => request(t.app).get('/v1/usage/today').set('x-api-key', key),
        () =>
          request(t.app)
            .post('/v1/search')
            .set('x-api-key', key)
            .send({
              query: 'q',
              owner_id: 'mix',
              filters: {
                metadata: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])),
              },
            }),
        () =>
          request(t.app)
            .post('/v1/memories')
            .set('x-api-key', key)
            .send({ text: 'big', owner_id: 'mix', metadata: { blob: 'x'.repeat(20_000) } }),
        () => request(t.app).post('/v1/dashboard/session').send({ access_token: 'junk' }),
        () =>
          request(t.app)
            .post('/admin/memory-hygiene')
            .set('x-admin-token', 'wrong-token-0123456789'),
        () =>
          request(t.app)
            .post('/v1/memories')
            .set('x-api-key', 'mnemo_wrong')
            .send({ text: 'x', owner_id: 'mix' }),
      ];
      redis.pause();
      let statuses: number[];
      try {
        statuses = (await Promise.all(calls.map((call) => call()))).map((res) => res.status);
      } finally {
        redis.resume();
      }
      expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);
      // The bounded inputs are still refused as such, Redis or not.
      expect(statuses[5]).toBe(400);
      expect(statuses[6]).toBe(400);
    });

    it('fails open within the deadline: writes are stored and answered 200', async () => {
      redis.pause();
      let answers: request.Response[];
      const started = Date.now();
      try {
        answers = await Promise.all(
          Array.from({ length: 3 }, (_, i) =>
            request(t.app)
              .post('/v1/memories')
              .set('x-api-key', t.tenant.apiKey)
              .send({ text: `open write ${i} ${started}`, owner_id: 'open', owner_type: 'user' }),
          ),
        );
      } finally {
        redis.resume();
      }
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 1_000);
    });
  });

  describe('a long document ingest at the deadline', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ MNEMO_REQUEST_DEADLINE_MS: '300' });
    });
    afterAll(async () => t?.close());

    it('stops writing at the deadline and answers what it stored', async () => {
      // 100 pieces of ~3,900 characters (a 390k-character document): one memory each, the
      // most one request may make.
      const paragraphs = Array.from({ length: 100 }, (_, i) =>
        Array.from(
          { length: 45 },
          (_, j) => `Rule ${i}.${j} of the long handbook covers case ${i * 45 + j} in full.`,
        ).join(' '),
      );
      const res = await request(t.app)
        .post('/v1/ingest')
        .set('x-api-key', t.tenant.apiKey)
        .send({
          type: 'document',
          owner_id: 'long',
          owner_type: 'app',
          max_piece_chars: 4_000,
          text: paragraphs.join('\n\n'),
        });
      const storedNow = await storedCount(t);
      await sleep(1_500);
      // Before the fence the ingest went on after the deadline's 503, storing every piece.
      expect(await storedCount(t)).toBe(storedNow);
      expect(storedNow).toBeLessThan(paragraphs.length);
      if (res.status === 503) {
        // A plain 503 means nothing was written.
        expect(res.body.error.details).toBeUndefined();
        expect(res.body.error.message).toMatch(/^The request did not finish in time; nothing/);
        expect(storedNow).toBe(0);
      } else {
        expect(res.status).toBe(200);
        expect(res.body.complete).toBe(false);
        expect(res.body.stored).toBe(storedNow);
        expect(res.body.skipped).toBeGreaterThan(0);
      }
    });
  });
});

async function storedCount(t: TestApp): Promise<number> {
  const [row] = await t.database.db
    .select({ n: count() })
    .from(memories)
    .where(eq(memories.workspaceId, t.tenant.workspaceId));
  return row!.n;
}

// The real entry point: a serving process must outlive a Redis stall and its resumption.
describe.runIf(testBackend() === 'pglite')('a server process while its Redis stalls', () => {
  let redis: OwnRedis;
  let server: Started;
  let dataDir: string;
  const apiKey = `mnemo_${randomBytes(24).toString('base64url')}`;

  beforeAll(async () => {
    redis = await OwnRedis.start();
    dataDir = await mkdtemp(join(tmpdir(), 'mnemo-redis-stall-'));
    server = await startServer({
      MNEMO_DATA_DIR: dataDir,
      REDIS_URL: redis.url,
      MNEMO_BOOTSTRAP_API_KEY: apiKey,
      MNEMO_REQUEST_DEADLINE_MS: String(DEADLINE_MS),
      MNEMO_HYGIENE_INTERVAL_MS: '0',
    });
  }, 60_000);
  afterAll(async () => {
    if (server) await stop(server.child);
    await redis?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('keeps serving through the stall and after it, failing open', async () => {
    redis.pause();
    let statuses: number[];
    try {
      statuses = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const res =
            i % 2 === 0
              ? await fetch(`${server.baseUrl}/v1/memories`, {
                  method: 'POST',
                  headers: {
                    authorization: `Bearer ${apiKey}`,
                    'content-type': 'application/json',
                  },
                  body: JSON.stringify({
                    text: `process write ${i}`,
                    owner_id: 'p',
                    owner_type: 'user',
                  }),
                })
              : await fetch(`${server.baseUrl}/v1/dashboard/session`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: '{}',
                });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      await sleep(1_000);
    } finally {
      redis.resume();
    }
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(statuses.filter((_, i) => i % 2 === 0)).toEqual([200, 200, 200]);
    await sleep(500);
    expect(server.child.exitCode).toBeNull();
    const health = await fetch(`${server.baseUrl}/healthz`);
    expect(health.status).toBe(200);
  });
});

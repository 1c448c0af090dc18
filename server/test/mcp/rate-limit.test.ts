import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestId } from '../../src/http/request-id.js';
import { clientRateLimit } from '../../src/http/limits.js';
import { clientAddressKey, ipv6Prefix64 } from '../../src/http/rate-limit.js';
import { createLimitBackend, type LimitBackend } from '../../src/limits/backend.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

describe('clientAddressKey', () => {
  const key = (ip: string) => clientAddressKey({ ip, socket: {} as never });

  it('uses IPv4 addresses as they are, unmapping IPv4-in-IPv6', () => {
    expect(key('203.0.113.7')).toBe('203.0.113.7');
    expect(key('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('folds IPv6 addresses to their /64', () => {
    expect(ipv6Prefix64('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(ipv6Prefix64('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(ipv6Prefix64('2001:0db8:0001:0002:ffff::')).toBe('2001:db8:1:2::/64');
    expect(ipv6Prefix64('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(ipv6Prefix64('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(key('2001:db8:1:2:aaaa::1')).toBe(key('2001:db8:1:2:bbbb::2'));
    expect(key('2001:db8:1:2::1')).not.toBe(key('2001:db8:1:3::1'));
  });
});

describe('rateLimit middleware', () => {
  function appWith(backend: LimitBackend, trustProxy: boolean | string = false) {
    const app = express();
    app.set('trust proxy', trustProxy);
    app.use(requestId());
    app.use(
      clientRateLimit({
        backend,
        name: 'test',
        limit: 2,
        key: clientAddressKey,
        describe: '2 requests per minute',
      }),
    );
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
    return app;
  }

  it('answers past the limit with 429 RATE_LIMITED and Retry-After in seconds', async () => {
    const app = appWith(await createLimitBackend());
    const first = await request(app).get('/');
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({
      'ratelimit-policy': '"test";q=2;w=60',
      ratelimit: '"test";r=1;t=60',
    });
    expect((await request(app).get('/')).status).toBe(200);
    const limited = await request(app).get('/');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit']).toMatch(/^"test";r=0;t=\d+$/);
    expect(limited.body).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringMatching(
          /^Rate limit exceeded: 2 requests per minute; retry in \d+ s$/,
        ),
      },
      request_id: limited.headers['x-request-id'],
    });
  });

  it('ignores X-Forwarded-For unless trust proxy says so', async () => {
    const untrusted = appWith(await createLimitBackend());
    for (const ip of ['198.51.100.1', '198.51.100.2'])
      await request(untrusted).get('/').set('x-forwarded-for', ip);
    expect((await request(untrusted).get('/').set('x-forwarded-for', '198.51.100.3')).status).toBe(
      429,
    );

    const trusted = appWith(await createLimitBackend(), 'loopback');
    for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      expect((await request(trusted).get('/').set('x-forwarded-for', ip)).status).toBe(200);
    }
  });

  it('lets requests through when the store fails', async () => {
    // Redis that is not there: every check fails, and the limit fails open.
    const broken = await createLimitBackend({ redisUrl: 'redis://127.0.0.1:1' });
    const app = appWith(broken);
    for (let i = 0; i < 4; i += 1) expect((await request(app).get('/')).status).toBe(200);
    await broken.close();
  });
});

describeDb('MCP IP rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Behind a proxy on loopback: X-Forwarded-For names the client.
    t = await createTestApp({
      MNEMO_MCP_RATE_LIMIT_PER_MINUTE: '3',
      MNEMO_TRUST_PROXY: 'loopback',
    });
  });
  afterAll(async () => {
    await t?.mcpSessions.closeAll();
    await t?.close();
  });

  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it('limits each client address on MCP paths with 429 and Retry-After, after the 405 check', async () => {
    const client = from('203.0.113.10');
    expect((await request(t.app).get('/mcp').set(client)).status).toBe(200);
    expect((await request(t.app).get('/v1/mcp').set(client)).status).toBe(200);
    expect((await request(t.app).post('/mcp').set(client).send({})).status).toBe(401);

    const limited = await request(t.app)
      .post('/mcp')
      .set(client)
      .set('authorization', `Bearer ${t.tenant.apiKey}`)
      .send({});
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(limited.body.request_id).toBe(limited.headers['x-request-id']);
    expect((await request(t.app).get('/mcp').set(client)).status).toBe(429);

    // 405 and OPTIONS answer before the limit; REST routes are not under it; other clients are not.
    expect((await request(t.app).put('/mcp').set(client)).status).toBe(405);
    expect((await request(t.app).options('/mcp').set(client)).status).toBe(204);
    expect(
      (
        await request(t.app)
          .get('/v1/memories')
          .set(client)
          .set('authorization', `Bearer ${t.tenant.apiKey}`)
      ).status,
    ).toBe(200);
    expect((await request(t.app).get('/mcp').set(from('203.0.113.11'))).status).toBe(200);
  });
});

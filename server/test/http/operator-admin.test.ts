import { randomBytes } from 'node:crypto';
import { contract } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Logger } from '../../src/logger.js';
import { signAdminRequest } from '../../src/http/admin-auth.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { TEST_REDIS_URL } from '../support/redis.js';

const TOKEN = 'admin-token-0123456789abcdef';
const HEALTH = contract.admin.getBillingHealth.path;
const KEYS = '/v1/api-keys';

const nonce = () => randomBytes(16).toString('hex');
const now = () => Math.floor(Date.now() / 1000);

/** A signed x-admin-token for one request, as docs/operator.md describes it. */
function signed(
  method: string,
  path: string,
  { body, timestamp = now(), n = nonce(), token = TOKEN } = {} as {
    body?: string;
    timestamp?: number;
    n?: string;
    token?: string;
  },
): string {
  return signAdminRequest(token, { timestamp, nonce: n, method, path, body });
}

/** The warn lines a logger received, so a test can see what break-glass logs (and what not). */
function captureWarnings(logger: Logger): { lines: unknown[][]; restore(): void } {
  const lines: unknown[][] = [];
  const original = logger.warn.bind(logger);
  logger.warn = ((...args: unknown[]) => {
    lines.push(args);
  }) as Logger['warn'];
  return { lines, restore: () => (logger.warn = original) };
}

describeDb('admin auth: token, HMAC-signed form, IP allowlist, break-glass', () => {
  describe('the signed form', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN });
    }, 120_000);
    afterAll(async () => t?.close());

    it('accepts the plain token and a valid signature (GET with a query, no body)', async () => {
      await request(t.app).get(HEALTH).set('x-admin-token', TOKEN).expect(200);
      const path = `${KEYS}?workspace_id=${t.tenant.workspaceId}`;
      const res = await request(t.app).get(path).set('x-admin-token', signed('GET', path));
      expect(res.status).toBe(200);
      expect(res.body.api_keys).toHaveLength(1);
    });

    it('covers the exact body bytes of a POST', async () => {
      const body = JSON.stringify({ workspace_id: t.tenant.workspaceId, name: 'signed' });
      const ok = await request(t.app)
        .post(KEYS)
        .set('content-type', 'application/json')
        .set('x-admin-token', signed('POST', KEYS, { body }))
        .send(body);
      expect(ok.status).toBe(201);
      // Same signature scheme, another body: the signature no longer matches, nothing is minted.
      const tampered = JSON.stringify({ workspace_id: t.tenant.workspaceId, name: 'tampered' });
      const before = await request(t.app)
        .get(`${KEYS}?workspace_id=${t.tenant.workspaceId}`)
        .set('x-admin-token', TOKEN);
      const res = await request(t.app)
        .post(KEYS)
        .set('content-type', 'application/json')
        .set('x-admin-token', signed('POST', KEYS, { body }))
        .send(tampered);
      expect(res.status).toBe(401);
      expect(res.body.error).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Invalid x-admin-token signature',
      });
      const after = await request(t.app)
        .get(`${KEYS}?workspace_id=${t.tenant.workspaceId}`)
        .set('x-admin-token', TOKEN);
      expect(after.body.api_keys).toHaveLength(before.body.api_keys.length);
    });

    it('refuses a bad signature, another key, method or path', async () => {
      const cases = [
        signed('GET', HEALTH).replace(/s=[0-9a-f]{4}/, 's=0000'),
        signed('GET', HEALTH, { token: 'another-token-0123456789' }),
        signed('POST', HEALTH),
        signed('GET', '/v1/admin/billing/health?x=1'),
      ];
      for (const header of cases) {
        const res = await request(t.app).get(HEALTH).set('x-admin-token', header);
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('UNAUTHORIZED');
      }
    });

    it('refuses a timestamp outside the skew window, either side', async () => {
      for (const timestamp of [now() - 301, now() + 301]) {
        const res = await request(t.app)
          .get(HEALTH)
          .set('x-admin-token', signed('GET', HEALTH, { timestamp }));
        expect(res.status).toBe(401);
        expect(res.body.error.message).toContain('within 300 s');
      }
      // Inside the window (a clock a little behind or ahead) is fine.
      for (const timestamp of [now() - 290, now() + 290]) {
        await request(t.app)
          .get(HEALTH)
          .set('x-admin-token', signed('GET', HEALTH, { timestamp }))
          .expect(200);
      }
    });

    it('refuses a replayed nonce, even on another route', async () => {
      const n = nonce();
      await request(t.app)
        .get(HEALTH)
        .set('x-admin-token', signed('GET', HEALTH, { n }))
        .expect(200);
      const replay = await request(t.app)
        .get(HEALTH)
        .set('x-admin-token', signed('GET', HEALTH, { n }));
      expect(replay.status).toBe(401);
      expect(replay.body.error.message).toContain('replayed');
      const path = `${KEYS}?workspace_id=${t.tenant.workspaceId}`;
      const elsewhere = await request(t.app)
        .get(path)
        .set('x-admin-token', signed('GET', path, { n }));
      expect(elsewhere.status).toBe(401);
    });

    it('treats a malformed signed form as a wrong token', async () => {
      for (const header of ['v1,t=1,n=short,s=00', `v1,t=${now()},n=${nonce()}`, 'v2,whatever']) {
        const res = await request(t.app).get(HEALTH).set('x-admin-token', header);
        expect(res.status).toBe(401);
      }
    });
  });

  describe('nonces on Redis (REDIS_URL): shared by every instance', () => {
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      a = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN, REDIS_URL: TEST_REDIS_URL });
      b = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN, REDIS_URL: TEST_REDIS_URL });
    }, 120_000);
    afterAll(async () => {
      await a?.close();
      await b?.close();
    });

    it('a nonce used on one instance is refused on another', async () => {
      const n = nonce();
      await request(a.app)
        .get(HEALTH)
        .set('x-admin-token', signed('GET', HEALTH, { n }))
        .expect(200);
      const res = await request(b.app)
        .get(HEALTH)
        .set('x-admin-token', signed('GET', HEALTH, { n }));
      expect(res.status).toBe(401);
      expect(res.body.error.message).toContain('replayed');
    });
  });

  describe('IP allowlist and break-glass', () => {
    let inside: TestApp;
    let outside: TestApp;
    let glass: TestApp;
    let expiredGlass: TestApp;
    let warnings: { lines: unknown[][]; restore(): void } | undefined;
    beforeAll(async () => {
      // supertest connects over loopback: 127.0.0.1 (or ::ffff:127.0.0.1).
      inside = await createTestApp({
        MNEMO_ADMIN_TOKEN: TOKEN,
        MNEMO_ADMIN_IP_ALLOWLIST: '10.0.0.0/8, 127.0.0.0/8',
      });
      outside = await createTestApp({
        MNEMO_ADMIN_TOKEN: TOKEN,
        MNEMO_ADMIN_IP_ALLOWLIST: '10.0.0.0/8,2001:db8::/32',
      });
      glass = await createTestApp({
        MNEMO_ADMIN_TOKEN: TOKEN,
        MNEMO_ADMIN_IP_ALLOWLIST: '10.0.0.0/8',
        MNEMO_ADMIN_BREAK_GLASS_UNTIL: new Date(Date.now() + 3_600_000).toISOString(),
      });
      expiredGlass = await createTestApp({
        MNEMO_ADMIN_TOKEN: TOKEN,
        MNEMO_ADMIN_IP_ALLOWLIST: '10.0.0.0/8',
        MNEMO_ADMIN_BREAK_GLASS_UNTIL: new Date(Date.now() - 1000).toISOString(),
      });
    }, 240_000);
    afterEach(() => warnings?.restore());
    afterAll(async () => {
      for (const t of [inside, outside, glass, expiredGlass]) await t?.close();
    });

    it('lets an address inside the list through with a valid credential', async () => {
      await request(inside.app).get(HEALTH).set('x-admin-token', TOKEN).expect(200);
      await request(inside.app).get(HEALTH).set('x-admin-token', signed('GET', HEALTH)).expect(200);
      await request(inside.app).get(HEALTH).set('x-admin-token', 'wrong-token').expect(401);
    });

    it('refuses an address outside the list with 403, before looking at the credential', async () => {
      for (const header of [TOKEN, 'wrong-token']) {
        const res = await request(outside.app).get(HEALTH).set('x-admin-token', header);
        expect(res.status).toBe(403);
        expect(res.body.error).toEqual({
          code: 'FORBIDDEN',
          message: 'Admin routes are not open to this address',
        });
      }
      // Every admin-token route is behind it, the key routes included.
      const keys = await request(outside.app)
        .get(`${KEYS}?workspace_id=${outside.tenant.workspaceId}`)
        .set('x-admin-token', TOKEN);
      expect(keys.status).toBe(403);
    });

    it('break-glass lets a valid credential through from outside, logged at warn without it', async () => {
      warnings = captureWarnings(glass.deps.logger);
      await request(glass.app).get(HEALTH).set('x-admin-token', TOKEN).expect(200);
      await request(glass.app).get(HEALTH).set('x-admin-token', signed('GET', HEALTH)).expect(200);
      // A wrong credential is still a 401, and not logged as a break-glass use.
      await request(glass.app).get(HEALTH).set('x-admin-token', 'wrong-token').expect(401);
      const breakGlass = warnings.lines.filter((line) => String(line[1]).includes('break-glass'));
      expect(breakGlass).toHaveLength(2);
      expect(breakGlass.map((line) => (line[0] as { form: string }).form)).toEqual([
        'plain',
        'signed',
      ]);
      expect(JSON.stringify(warnings.lines)).not.toContain(TOKEN);
    });

    it('refuses a malformed allowlist when the app is made', () => {
      const config = inside.deps.config;
      for (const entry of ['10.0.0.0/33', 'localhost', '300.1.1.1']) {
        expect(() =>
          createApp({
            ...inside.deps,
            config: { ...config, adminAuth: { ...config.adminAuth, ipAllowlist: [entry] } },
          }),
        ).toThrow(/MNEMO_ADMIN_IP_ALLOWLIST/);
      }
    });

    it('break-glass in the past changes nothing', async () => {
      const res = await request(expiredGlass.app).get(HEALTH).set('x-admin-token', TOKEN);
      expect(res.status).toBe(403);
    });
  });
});

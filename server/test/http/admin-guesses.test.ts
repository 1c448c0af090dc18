import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const TOKEN = 'admin-token-guess-test-0123456789';

describeDb('admin token guesses', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Behind one trusted proxy, so each test address is its own client.
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN, MNEMO_TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => t?.close());

  const cleanup = (token: string, address: string) =>
    request(t.app)
      .post('/admin/sessions/cleanup')
      .set('x-forwarded-for', address)
      .set('x-admin-token', token);

  it('are limited per address: 20 wrong tokens, then 429 for everything from it', async () => {
    // 300 wrong tokens were all answered 401, as fast as they came.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => cleanup(`wrong-${i}`, '203.0.113.7')),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    const refused = answers.find((res) => res.status === 429)!;
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Even the right token: a guesser learns nothing more from this address in the window.
    expect((await cleanup(TOKEN, '203.0.113.7')).status).toBe(429);
    // Another address is not affected.
    expect((await cleanup(TOKEN, '203.0.113.8')).status).toBe(200);
  });

  it('does not count successes against an address', async () => {
    for (let i = 0; i < 25; i += 1) {
      expect((await cleanup(TOKEN, '203.0.113.9')).status).toBe(200);
    }
    expect((await cleanup('wrong', '203.0.113.9')).status).toBe(401);
  });
});

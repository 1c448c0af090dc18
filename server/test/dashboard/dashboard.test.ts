import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, dashboardSessions, workspaces } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { cookiesOf, DASHBOARD_ENV, signToken, unsignedToken } from './support.js';

interface Signed {
  cookie: string;
  csrf: string;
  workspaceId: string;
}

describeDb('dashboard API', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ ...DASHBOARD_ENV, MNEMO_ADMIN_TOKEN: 'admin-token-0123456789' });
  });
  afterAll(async () => t?.close());

  /** Bootstrap + session for a user: the console's sign-in. */
  async function signIn(user: string): Promise<Signed> {
    const token = await signToken(user);
    const boot = await request(t.app).post('/v1/dashboard/bootstrap').send({ access_token: token });
    expect(boot.status, JSON.stringify(boot.body)).toBe(200);
    const workspaceId = boot.body.data.workspace.id as string;
    const session = await request(t.app)
      .post('/v1/dashboard/session')
      .send({ access_token: token, workspace_id: workspaceId });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    const cookies = cookiesOf(session);
    return {
      cookie: `svc_dash_session=${cookies.svc_dash_session}`,
      csrf: session.body.data.csrf_token as string,
      workspaceId,
    };
  }

  /** A key minted from the console for the session's workspace. */
  function mintKey(s: Signed, name: string) {
    return request(t.app)
      .post('/v1/dashboard/api-keys')
      .set('cookie', s.cookie)
      .set('x-csrf-token', s.csrf)
      .send({ workspace_id: s.workspaceId, name });
  }

  describe('bootstrap and session', () => {
    it('creates the first workspace once, then returns it', async () => {
      const token = await signToken('user-boot');
      const first = await request(t.app)
        .post('/v1/dashboard/bootstrap')
        .send({ access_token: token, workspace_name: 'Acme' });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        ok: true,
        data: { created: true, workspace: { name: 'Acme' } },
      });
      const again = await request(t.app)
        .post('/v1/dashboard/bootstrap')
        .send({ access_token: token });
      expect(again.body).toEqual({
        ok: true,
        data: { created: false, workspace: first.body.data.workspace },
      });
    });

    it('sets an HttpOnly, SameSite=Lax session cookie and stores only hashes', async () => {
      const token = await signToken('user-cookie');
      const boot = await request(t.app)
        .post('/v1/dashboard/bootstrap')
        .send({ access_token: token });
      const res = await request(t.app)
        .post('/v1/dashboard/session')
        .send({ access_token: token, workspace_id: boot.body.data.workspace.id });
      expect(res.status).toBe(200);
      const setCookie = (res.headers['set-cookie'] as unknown as string[]).join('\n');
      expect(setCookie).toMatch(
        /svc_dash_session=[^;]+; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax/,
      );
      expect(setCookie).not.toMatch(/svc_dash_session=[^\n]*Secure/);
      const value = cookiesOf(res).svc_dash_session!;
      const rows = await t.database.db.select().from(dashboardSessions);
      expect(rows.some((row) => row.tokenHash === value)).toBe(false);
      expect(rows.some((row) => row.userId === 'user-cookie')).toBe(true);
      expect(res.body.data.csrf_token).toMatch(/^[\w-]{20,}$/);
    });

    it('marks the cookie Secure behind HTTPS (trusted proxy)', async () => {
      const https = await createTestApp({ ...DASHBOARD_ENV, MNEMO_TRUST_PROXY: 'true' });
      try {
        const token = await signToken('user-https');
        const boot = await request(https.app)
          .post('/v1/dashboard/bootstrap')
          .send({ access_token: token });
        const res = await request(https.app)
          .post('/v1/dashboard/session')
          .set('x-forwarded-proto', 'https')
          .send({ access_token: token, workspace_id: boot.body.data.workspace.id });
        expect((res.headers['set-cookie'] as unknown as string[]).join('\n')).toMatch(
          /svc_dash_session=[^\n]*; HttpOnly; Secure; SameSite=Lax/,
        );
      } finally {
        await https.close();
      }
    });

    it('refuses a workspace the user is not a member of (403)', async () => {
      const other = await signIn('user-other');
      const token = await signToken('user-intruder');
      const res = await request(t.app)
        .post('/v1/dashboard/session')
        .send({ access_token: token, workspace_id: other.workspaceId });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    });

    it.each([
      ['alg none', () => unsignedToken('user-x')],
      ['a wrong key', () => signToken('user-x', { secret: 'another-secret-0123456789abcdefghij' })],
      ['a wrong audience', () => signToken('user-x', { audience: 'someone-else' })],
      ['a wrong issuer', () => signToken('user-x', { issuer: 'https://evil.test' })],
      [
        'an expired token',
        () => signToken('user-x', { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      ],
      ['garbage', async () => 'not.a.jwt'],
    ])('refuses %s with 401 and creates nothing', async (_name, make) => {
      const before = await t.database.db.$count(workspaces);
      const token = await make();
      const boot = await request(t.app)
        .post('/v1/dashboard/bootstrap')
        .send({ access_token: token });
      expect(boot.status).toBe(401);
      expect(boot.body).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
      const session = await request(t.app)
        .post('/v1/dashboard/session')
        .send({ access_token: token, workspace_id: t.tenant.workspaceId });
      expect(session.status).toBe(401);
      expect(session.headers['set-cookie']).toBeUndefined();
      expect(await t.database.db.$count(workspaces)).toBe(before);
    });

    it('refuses unknown properties and missing fields with 400 in the dashboard envelope', async () => {
      const token = await signToken('user-strict');
      const extra = await request(t.app)
        .post('/v1/dashboard/bootstrap')
        .send({ access_token: token, admin: true });
      expect(extra.status).toBe(400);
      expect(extra.body).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
      expect(extra.body.error.details).toBeDefined();
      const missing = await request(t.app)
        .post('/v1/dashboard/session')
        .send({ access_token: token });
      expect(missing.status).toBe(400);
      expect(missing.body.ok).toBe(false);
      const malformed = await request(t.app)
        .post('/v1/dashboard/bootstrap')
        .set('content-type', 'application/json')
        .send('{oops');
      expect(malformed.status).toBe(400);
      expect(malformed.body.ok).toBe(false);
    });
  });

  describe('session routes', () => {
    it('answers 401 without a session, with an unknown one, and with an expired one', async () => {
      const none = await request(t.app).get('/v1/dashboard/workspaces');
      expect(none.status).toBe(401);
      expect(none.body).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
      const unknown = await request(t.app)
        .get('/v1/dashboard/workspaces')
        .set('cookie', 'svc_dash_session=forged');
      expect(unknown.status).toBe(401);

      const signed = await signIn('user-expired');
      await t.database.db
        .update(dashboardSessions)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(dashboardSessions.userId, 'user-expired'));
      const expired = await request(t.app)
        .get('/v1/dashboard/overview-stats')
        .set('cookie', signed.cookie);
      expect(expired.status).toBe(401);
      // The same expired cookie is no credential on tenant routes either.
      const tenant = await request(t.app).get('/v1/usage/today').set('cookie', signed.cookie);
      expect(tenant.status).toBe(401);
    });

    it('lists and creates workspaces (owner role), CSRF required on create', async () => {
      const s = await signIn('user-ws');
      const list = await request(t.app).get('/v1/dashboard/workspaces').set('cookie', s.cookie);
      expect(list.status).toBe(200);
      expect(list.body.data.current_workspace_id).toBe(s.workspaceId);
      expect(list.body.data.workspaces).toEqual([
        expect.objectContaining({ id: s.workspaceId, role: 'owner' }),
      ]);

      const before = await t.database.db.$count(workspaces);
      const noCsrf = await request(t.app)
        .post('/v1/dashboard/workspaces')
        .set('cookie', s.cookie)
        .send({ name: 'Second' });
      expect(noCsrf.status).toBe(403);
      expect(noCsrf.body).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      const badCsrf = await request(t.app)
        .post('/v1/dashboard/workspaces')
        .set('cookie', s.cookie)
        .set('x-csrf-token', 'wrong')
        .send({ name: 'Second' });
      expect(badCsrf.status).toBe(403);
      expect(await t.database.db.$count(workspaces)).toBe(before);

      const made = await request(t.app)
        .post('/v1/dashboard/workspaces')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf)
        .send({ name: 'Second' });
      expect(made.status).toBe(200);
      expect(made.body.data.workspace).toMatchObject({ name: 'Second', role: 'owner' });
      const strict = await request(t.app)
        .post('/v1/dashboard/workspaces')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf)
        .send({ name: 'Third', plan: 'scale' });
      expect(strict.status).toBe(400);
    });

    it('mints a key once, lists it without the secret, and revokes it (then 401)', async () => {
      const s = await signIn('user-keys');
      const created = await mintKey(s, 'ci');
      expect(created.status).toBe(200);
      const key = created.body.data.key as string;
      expect(key).toMatch(/^mnemo_/);
      const list = await request(t.app).get('/v1/dashboard/api-keys').set('cookie', s.cookie);
      expect(list.body.data.api_keys).toHaveLength(1);
      expect(JSON.stringify(list.body)).not.toContain(key);

      const use = await request(t.app).get('/v1/usage/today').set('authorization', `Bearer ${key}`);
      expect(use.status).toBe(200);
      expect(use.body.workspace_id).toBe(s.workspaceId);

      const revoked = await request(t.app)
        .post('/v1/dashboard/api-keys/revoke')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf)
        .send({ api_key_id: created.body.data.api_key.id });
      expect(revoked.status).toBe(200);
      expect(revoked.body.data.api_key.revoked_at).not.toBeNull();
      const after = await request(t.app)
        .get('/v1/usage/today')
        .set('authorization', `Bearer ${key}`);
      expect(after.status).toBe(401);
    });

    it("refuses another workspace's id and another workspace's key with 403, changing nothing", async () => {
      const mine = await signIn('user-a');
      const theirs = await signIn('user-b');
      const listOther = await request(t.app)
        .get(`/v1/dashboard/api-keys?workspace_id=${theirs.workspaceId}`)
        .set('cookie', mine.cookie);
      expect(listOther.status).toBe(403);
      const keysBefore = await t.database.db.$count(apiKeys);
      const mintOther = await request(t.app)
        .post('/v1/dashboard/api-keys')
        .set('cookie', mine.cookie)
        .set('x-csrf-token', mine.csrf)
        .send({ workspace_id: theirs.workspaceId, name: 'sneaky' });
      expect(mintOther.status).toBe(403);
      expect(mintOther.body).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      expect(await t.database.db.$count(apiKeys)).toBe(keysBefore);

      const theirKey = await request(t.app)
        .post('/v1/dashboard/api-keys')
        .set('cookie', theirs.cookie)
        .set('x-csrf-token', theirs.csrf)
        .send({ workspace_id: theirs.workspaceId, name: 'theirs' });
      const revokeOther = await request(t.app)
        .post('/v1/dashboard/api-keys/revoke')
        .set('cookie', mine.cookie)
        .set('x-csrf-token', mine.csrf)
        .send({ api_key_id: theirKey.body.data.api_key.id });
      expect(revokeOther.status).toBe(403);
      const [row] = await t.database.db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.id, theirKey.body.data.api_key.id));
      expect(row?.revokedAt).toBeNull();
      // A CSRF token of another session is no good either.
      const crossed = await request(t.app)
        .post('/v1/dashboard/api-keys')
        .set('cookie', mine.cookie)
        .set('x-csrf-token', theirs.csrf)
        .send({ workspace_id: mine.workspaceId, name: 'x' });
      expect(crossed.status).toBe(403);
    });

    it("shows the plan the API shows (the effective plan, not the workspace row's label)", async () => {
      const s = await signIn('user-plan');
      const created = await mintKey(s, 'plan');
      const usage = await request(t.app)
        .get('/v1/usage/today')
        .set('x-api-key', created.body.data.key as string);
      expect(usage.status).toBe(200);
      // A self-hosted install: the internal grant's default plan.
      expect(usage.body.plan).toBe('scale');
      const [row] = await t.database.db
        .select({ plan: workspaces.plan })
        .from(workspaces)
        .where(eq(workspaces.id, s.workspaceId));
      expect(row?.plan).not.toBe(usage.body.plan);
      const stats = await request(t.app)
        .get('/v1/dashboard/overview-stats')
        .set('cookie', s.cookie);
      expect(stats.body.data.workspace.plan).toBe(usage.body.plan);
    });

    it('reports overview stats and logs out (CSRF), after which the cookie is dead', async () => {
      const s = await signIn('user-logout');
      const stats = await request(t.app)
        .get('/v1/dashboard/overview-stats')
        .set('cookie', s.cookie);
      expect(stats.status).toBe(200);
      expect(stats.body.data).toMatchObject({
        workspace: { id: s.workspaceId },
        user: { id: 'user-logout' },
        memories: { total: 0 },
      });
      const noCsrf = await request(t.app).post('/v1/dashboard/logout').set('cookie', s.cookie);
      expect(noCsrf.status).toBe(403);
      const out = await request(t.app)
        .post('/v1/dashboard/logout')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf);
      expect(out.status).toBe(200);
      expect(out.body).toEqual({ ok: true });
      expect((out.headers['set-cookie'] as unknown as string[]).join('\n')).toMatch(
        /svc_dash_session=;/,
      );
      const again = await request(t.app).get('/v1/dashboard/workspaces').set('cookie', s.cookie);
      expect(again.status).toBe(401);
    });
  });

  describe('session auth on tenant routes', () => {
    it('reads with the cookie alone and writes only with the CSRF header', async () => {
      const s = await signIn('user-tenant');
      const usage = await request(t.app).get('/v1/usage/today').set('cookie', s.cookie);
      expect(usage.status).toBe(200);
      expect(usage.body.workspace_id).toBe(s.workspaceId);
      const memory = { text: 'The customer prefers email', user_id: 'cust-1' };
      const noCsrf = await request(t.app).post('/v1/memories').set('cookie', s.cookie).send(memory);
      expect(noCsrf.status).toBe(403);
      expect(noCsrf.body.error.code).toBe('FORBIDDEN');
      const listed = await request(t.app)
        .get('/v1/memories?user_id=cust-1')
        .set('cookie', s.cookie);
      expect(listed.body.total).toBe(0);
      const written = await request(t.app)
        .post('/v1/memories')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf)
        .send(memory);
      expect(written.status, JSON.stringify(written.body)).toBe(200);
      const after = await request(t.app).get('/v1/memories?user_id=cust-1').set('cookie', s.cookie);
      expect(after.body.total).toBe(1);
      // The tenant envelope stays the tenant envelope.
      const denied = await request(t.app)
        .get('/v1/memories')
        .set('cookie', 'svc_dash_session=nope');
      expect(denied.status).toBe(401);
      expect(denied.body.ok).toBeUndefined();
      expect(denied.body.error.code).toBe('UNAUTHORIZED');
    });

    it('explains scores to the console’s playground only; an API key’s explain is ignored (spec)', async () => {
      const s = await signIn('user-explain');
      const memory = { text: 'The customer prefers email', user_id: 'cust-2' };
      const written = await request(t.app)
        .post('/v1/memories')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf)
        .send(memory);
      expect(written.status).toBe(200);
      const query = { query: 'prefers email', user_id: 'cust-2', explain: true };
      const console = await request(t.app)
        .post('/v1/search')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf)
        .send(query);
      expect(console.status).toBe(200);
      expect(console.body.results[0]._explain).toMatchObject({ match_sources: expect.any(Array) });
      const key = await t.deps.apiKeys.mint(s.workspaceId, 'explain');
      const api = await request(t.app)
        .post('/v1/search')
        .set('x-api-key', key.plaintext)
        .send(query);
      expect(api.status).toBe(200);
      expect(api.body.results.length).toBeGreaterThan(0);
      expect(api.body.results[0]._explain).toBeUndefined();
    });
  });

  describe('POST /admin/sessions/cleanup', () => {
    it('deletes expired sessions only, behind the admin token', async () => {
      const live = await signIn('user-live');
      await signIn('user-stale');
      await t.database.db
        .update(dashboardSessions)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(dashboardSessions.userId, 'user-stale'));
      const anonymous = await request(t.app).post('/admin/sessions/cleanup');
      expect(anonymous.status).toBe(401);
      const res = await request(t.app)
        .post('/admin/sessions/cleanup')
        .set('x-admin-token', 'admin-token-0123456789');
      expect(res.status).toBe(200);
      expect(res.body.deleted).toBeGreaterThanOrEqual(1);
      const stale = await t.database.db
        .select()
        .from(dashboardSessions)
        .where(eq(dashboardSessions.userId, 'user-stale'));
      expect(stale).toHaveLength(0);
      const ok = await request(t.app).get('/v1/dashboard/workspaces').set('cookie', live.cookie);
      expect(ok.status).toBe(200);
    });
  });
});

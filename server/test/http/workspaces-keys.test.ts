import { contract } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countWorkspaces } from '../../src/db/queries/workspaces.js';
import { apiKeys } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const TOKEN = 'admin-token-0123456789abcdef';
const KEYS = '/v1/api-keys';
const WORKSPACES = contract.workspaces.createWorkspace.path;
const MISSING = '00000000-0000-4000-8000-000000000000';

describeDb('POST /v1/workspaces (admin-scoped key) and /v1/api-keys* (admin token)', () => {
  let t: TestApp;
  const admin = () => ({ 'x-admin-token': TOKEN });
  const mint = (body: object) => request(t.app).post(KEYS).set(admin()).send(body);
  const keyRows = () => t.database.db.select().from(apiKeys);

  beforeAll(async () => {
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN });
  }, 120_000);
  afterAll(async () => t?.close());

  describe('/v1/api-keys', () => {
    it('mints an introductory key shown once, listed without key material', async () => {
      const res = await mint({ workspace_id: t.tenant.workspaceId, name: 'ci' });
      expect(res.status).toBe(201);
      expect(contract.apiKeys.createApiKey.responses[201].parse(res.body)).toBeTruthy();
      expect(res.body.key).toMatch(/^mnemo_/);
      expect(res.body.api_key).toMatchObject({
        workspace_id: t.tenant.workspaceId,
        name: 'ci',
        scope: 'tenant',
        revoked_at: null,
      });
      const until = Date.parse(res.body.api_key.introductory_until);
      expect(until - Date.now()).toBeGreaterThan(47.9 * 3600_000);
      expect(until - Date.now()).toBeLessThanOrEqual(48 * 3600_000);
      // The key works on tenant routes of its workspace.
      await request(t.app)
        .get('/v1/memories')
        .set('authorization', `Bearer ${res.body.key}`)
        .expect(200);

      const list = await request(t.app)
        .get(`${KEYS}?workspace_id=${t.tenant.workspaceId}`)
        .set(admin());
      expect(list.status).toBe(200);
      expect(list.body.api_keys.map((k: { id: string }) => k.id)).toContain(res.body.api_key.id);
      const [row] = (await keyRows()).filter((k) => k.id === res.body.api_key.id);
      const text = JSON.stringify(list.body);
      expect(text).not.toContain(res.body.key);
      expect(text).not.toContain(row!.keyHash);
    });

    it('revokes a key (the key stops working; a second revoke keeps the first time)', async () => {
      const minted = await mint({ workspace_id: t.tenant.workspaceId, name: 'to revoke' });
      const id = minted.body.api_key.id as string;
      const first = await request(t.app).post(`${KEYS}/${id}/revoke`).set(admin());
      expect(first.status).toBe(200);
      expect(first.body.api_key.revoked_at).not.toBeNull();
      const again = await request(t.app).post(`${KEYS}/${id}/revoke`).set(admin());
      expect(again.body.api_key.revoked_at).toBe(first.body.api_key.revoked_at);
      const res = await request(t.app)
        .get('/v1/memories')
        .set('authorization', `Bearer ${minted.body.key}`);
      expect(res.status).toBe(401);
    });

    it('answers an unknown workspace or key with 404, writing nothing', async () => {
      const before = (await keyRows()).length;
      const post = await mint({ workspace_id: MISSING, name: 'x' });
      expect(post.status).toBe(404);
      expect(post.body.error.code).toBe('NOT_FOUND');
      const list = await request(t.app).get(`${KEYS}?workspace_id=${MISSING}`).set(admin());
      expect(list.status).toBe(404);
      const revoke = await request(t.app).post(`${KEYS}/${MISSING}/revoke`).set(admin());
      expect(revoke.status).toBe(404);
      expect((await keyRows()).length).toBe(before);
    });

    it.each([
      [{ workspace_id: 'nope', name: 'x' }, 'workspace_id'],
      [{ name: 'x' }, 'workspace_id'],
      [{ workspace_id: MISSING, name: '' }, 'name'],
      [{ workspace_id: MISSING, name: 'x'.repeat(101) }, 'name'],
      [{ workspace_id: MISSING, name: 'x', scope: 'root' }, 'scope'],
      [{ workspace_id: MISSING, name: 'x', extra: 1 }, 'body'],
    ])('bad body %o is a 400 envelope, nothing minted', async (body, field) => {
      const before = (await keyRows()).length;
      const res = await mint(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
      expect(Object.keys(res.body.error.details ?? {})).toContain(field);
      expect((await keyRows()).length).toBe(before);
    });

    it('bad query or id is a 400; no admin token is a 401', async () => {
      expect((await request(t.app).get(`${KEYS}?workspace_id=x`).set(admin())).status).toBe(400);
      expect((await request(t.app).get(KEYS).set(admin())).status).toBe(400);
      expect((await request(t.app).post(`${KEYS}/not-a-uuid/revoke`).set(admin())).status).toBe(
        400,
      );
      // A tenant key is not an admin credential.
      const res = await request(t.app)
        .get(`${KEYS}?workspace_id=${t.tenant.workspaceId}`)
        .set('authorization', `Bearer ${t.tenant.apiKey}`);
      expect(res.status).toBe(401);
    });
  });

  describe('POST /v1/workspaces', () => {
    let adminKey: string;
    beforeAll(async () => {
      const res = await mint({ workspace_id: t.tenant.workspaceId, name: 'ops', scope: 'admin' });
      expect(res.body.api_key.scope).toBe('admin');
      adminKey = res.body.key;
    });

    it('creates an independent workspace and its first key with an admin-scoped key', async () => {
      const res = await request(t.app)
        .post(WORKSPACES)
        .set('authorization', `Bearer ${adminKey}`)
        .send({ name: '  Acme support  ' });
      expect(res.status).toBe(201);
      expect(contract.workspaces.createWorkspace.responses[201].parse(res.body)).toBeTruthy();
      expect(res.body.workspace.name).toBe('Acme support');
      expect(res.body.workspace.id).not.toBe(t.tenant.workspaceId);
      expect(res.body.api_key).toMatchObject({
        workspace_id: res.body.workspace.id,
        scope: 'tenant',
      });
      const newKey = res.body.key as string;
      // The new key writes into the new workspace; the admin key's workspace does not see it.
      await request(t.app)
        .post('/v1/memories')
        .set('authorization', `Bearer ${newKey}`)
        .send({ user_id: 'u1', text: 'Only in the new workspace' })
        .expect(200);
      const theirs = await request(t.app)
        .get('/v1/memories?user_id=u1')
        .set('authorization', `Bearer ${newKey}`);
      expect(theirs.body.total).toBe(1);
      const mine = await request(t.app)
        .get('/v1/memories?user_id=u1')
        .set('authorization', `Bearer ${adminKey}`);
      expect(mine.body.total).toBe(0);
      const id = theirs.body.results[0].id as string;
      await request(t.app)
        .get(`/v1/memories/${id}`)
        .set('authorization', `Bearer ${adminKey}`)
        .expect(404);
    });

    it('refuses a tenant-scoped key (403) and anonymous callers (401), creating nothing', async () => {
      const before = await countWorkspaces(t.database.db);
      const tenant = await request(t.app)
        .post(WORKSPACES)
        .set('authorization', `Bearer ${t.tenant.apiKey}`)
        .send({ name: 'nope' });
      expect(tenant.status).toBe(403);
      expect(tenant.body.error.code).toBe('FORBIDDEN');
      const anonymous = await request(t.app).post(WORKSPACES).send({ name: 'nope' });
      expect(anonymous.status).toBe(401);
      // The admin token is not an API key either.
      const token = await request(t.app).post(WORKSPACES).set(admin()).send({ name: 'nope' });
      expect(token.status).toBe(401);
      expect(await countWorkspaces(t.database.db)).toBe(before);
    });

    it.each([
      [{}],
      [{ name: '' }],
      [{ name: '   ' }],
      [{ name: 'x'.repeat(101) }],
      [{ name: 'a', plan: 'scale' }],
      [{ name: 7 }],
    ])('bad body %o is a 400 envelope, nothing created', async (body) => {
      const before = await countWorkspaces(t.database.db);
      const res = await request(t.app)
        .post(WORKSPACES)
        .set('authorization', `Bearer ${adminKey}`)
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
      expect(await countWorkspaces(t.database.db)).toBe(before);
    });
  });
});

describeDb('operator-minted keys: 15 requests per minute for their first 48 hours', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The deployed per-key rate (60), not the suites' unthrottled one.
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN, MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '60' });
  }, 120_000);
  afterAll(async () => t?.close());

  it('shows q=15 in RateLimit-Policy and refuses the 16th request with 429', async () => {
    const minted = await request(t.app)
      .post(KEYS)
      .set('x-admin-token', TOKEN)
      .send({ workspace_id: t.tenant.workspaceId, name: 'new integration' });
    expect(minted.status).toBe(201);
    const auth = `Bearer ${minted.body.key}`;
    for (let i = 1; i <= 15; i += 1) {
      const res = await request(t.app).get('/v1/usage/today').set('authorization', auth);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toMatch(/^"key";q=15;w=60/);
    }
    const sixteenth = await request(t.app).get('/v1/usage/today').set('authorization', auth);
    expect(sixteenth.status).toBe(429);
    expect(sixteenth.body.error.code).toBe('RATE_LIMITED');
    // A key of the same workspace not minted by the operator route keeps the normal rate.
    const normal = await request(t.app)
      .get('/v1/usage/today')
      .set('authorization', `Bearer ${t.tenant.apiKey}`);
    expect(normal.status).toBe(200);
    expect(normal.headers['ratelimit-policy']).toMatch(/^"key";q=60;w=60/);
  });
});

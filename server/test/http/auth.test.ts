import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findActiveApiKeyByHash } from '../../src/db/queries/api-keys.js';
import { ApiKeyService } from '../../src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../../src/services/bootstrap.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

describeDb('API-key auth', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('accepts Authorization: Bearer and x-api-key', async () => {
    const bearer = await request(t.app)
      .get('/v1/memories')
      .set('authorization', `Bearer ${t.tenant.apiKey}`);
    expect(bearer.status).toBe(200);
    const header = await request(t.app).get('/v1/memories').set('x-api-key', t.tenant.apiKey);
    expect(header.status).toBe(200);
  });

  it('answers a missing key with the 401 envelope whose request_id is the x-request-id', async () => {
    const res = await request(t.app).get('/v1/memories');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: {
        code: 'UNAUTHORIZED',
        message: 'Missing API key: send Authorization: Bearer <key> or x-api-key: <key>',
      },
      request_id: res.headers['x-request-id'],
    });
  });

  it('answers a wrong key, a wrong scheme and a near-miss with 401', async () => {
    for (const headers of [
      { authorization: 'Bearer mnemo_not-a-real-key' },
      { authorization: `Basic ${t.tenant.apiKey}` },
      { 'x-api-key': t.tenant.apiKey.slice(0, -1) },
    ]) {
      const res = await request(t.app).get('/v1/memories').set(headers);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('checks auth before validating input', async () => {
    const res = await request(t.app).get('/v1/memories').query({ page: 'zero' });
    expect(res.status).toBe(401);
  });

  it('stores only a salted hash of each key', async () => {
    const plaintext = t.tenant.apiKey;
    const hash = t.deps.apiKeys.hash(plaintext);
    expect(hash).not.toContain(plaintext);
    const row = await findActiveApiKeyByHash(t.database.db, hash);
    expect(row?.keyHash).toBe(hash);
    expect(JSON.stringify(row)).not.toContain(plaintext);
    // Another salt gives another hash: the hash alone is useless elsewhere.
    const otherSalt = await ApiKeyService.create(t.database.db, {
      salt: 'another-salt-of-16+chars',
    });
    expect(otherSalt.hash(plaintext)).not.toBe(hash);
  });

  it('keeps one generated salt across restarts', async () => {
    const again = await ApiKeyService.create(t.database.db);
    expect(again.hash('x')).toBe(t.deps.apiKeys.hash('x'));
    expect(await again.authenticate(t.tenant.apiKey)).toMatchObject({
      workspaceId: t.tenant.workspaceId,
    });
  });

  it('registers a configured bootstrap key idempotently and mints none', async () => {
    const configured = 'mnemo_configured-bootstrap-key-0001';
    const config = { bootstrapApiKey: configured, bootstrapWorkspaceName: 'ops' };
    const first = await ensureBootstrapWorkspace(t.database.db, t.deps.apiKeys, config);
    const second = await ensureBootstrapWorkspace(t.database.db, t.deps.apiKeys, config);
    expect(first.mintedKey).toBeUndefined();
    expect(second.workspaceId).toBe(first.workspaceId);
    const res = await request(t.app).get('/v1/memories').set('x-api-key', configured);
    expect(res.status).toBe(200);
  });
});

describeDb('first-run bootstrap', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    // createTestApp made one workspace; start from an empty database instead.
    await t.database.db.execute('delete from workspaces');
  });
  afterAll(async () => t?.close());

  it('creates the default workspace and mints a working key once', async () => {
    const config = { bootstrapApiKey: undefined, bootstrapWorkspaceName: 'default' };
    const first = await ensureBootstrapWorkspace(t.database.db, t.deps.apiKeys, config);
    expect(first.mintedKey?.plaintext).toMatch(/^mnemo_[A-Za-z0-9_-]{32}$/);
    const res = await request(t.app)
      .get('/v1/memories')
      .set('authorization', `Bearer ${first.mintedKey?.plaintext}`);
    expect(res.status).toBe(200);
    const second = await ensureBootstrapWorkspace(t.database.db, t.deps.apiKeys, config);
    expect(second.mintedKey).toBeUndefined();
    expect(second.workspaceId).toBe(first.workspaceId);
  });
});

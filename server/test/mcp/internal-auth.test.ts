import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listAuditRecords } from '../../src/db/queries/audit.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { ACCEPT, INITIALIZE } from './support.js';

const SECRET = 'internal-secret-for-tests-0001';

describeDb('internal subrequest headers (spec auth mode I, rule 2)', () => {
  let t: TestApp;
  let disabled: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_INTERNAL_SECRET: SECRET });
    disabled = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await disabled?.close();
  });

  const internal = (app: TestApp, secret = SECRET, workspaceId = app.tenant.workspaceId) => ({
    'x-internal-mcp': '1',
    'x-internal-secret': secret,
    'x-workspace-id': workspaceId,
  });

  it('authenticates POST /v1/memories for the named workspace with the right secret', async () => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set(internal(t))
      .set('x-request-id', 'internal-write-1')
      .send({ text: 'Forwarded: Priya renewed her subscription.', user_id: 'priya' });
    expect(res.status).toBe(200);
    expect(res.body.stored).toBe(true);
    const list = await request(t.app)
      .get('/v1/memories')
      .query({ user_id: 'priya' })
      .set('x-api-key', t.tenant.apiKey);
    expect(list.body.results.map((m: { id: string }) => m.id)).toEqual([res.body.memory_id]);
    const [audit] = await listAuditRecords(t.database.db, { requestId: 'internal-write-1' });
    expect(audit).toMatchObject({ workspaceId: t.tenant.workspaceId, apiKeyId: null, status: 200 });
  });

  it('refuses a wrong secret, or a missing, malformed or unknown workspace, with 401', async () => {
    for (const headers of [
      internal(t, 'internal-secret-for-tests-0002'),
      internal(t, ''),
      internal(t, SECRET, ''),
      internal(t, SECRET, 'not-a-uuid'),
      internal(t, SECRET, '0b0a3d8e-97a4-4d3f-9a51-0c6fb4cde111'),
    ]) {
      const res = await request(t.app)
        .post('/v1/memories')
        .set(headers)
        .send({ text: 'Should not be stored.' });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
    // Even with a valid key beside it: internal credentials, once claimed, must be right.
    const withKey = await request(t.app)
      .post('/v1/memories')
      .set(internal(t, 'internal-secret-for-tests-0002'))
      .set('x-api-key', t.tenant.apiKey)
      .send({ text: 'Should not be stored either.' });
    expect(withKey.status).toBe(401);
  });

  it('grants nothing on any other route: without a key the answer is 401', async () => {
    const headers = internal(t);
    const attempts = {
      'GET /v1/memories': request(t.app).get('/v1/memories').set(headers),
      'GET /v1/memories/:id': request(t.app)
        .get('/v1/memories/0b0a3d8e-97a4-4d3f-9a51-0c6fb4cde111')
        .set(headers),
      'DELETE /v1/memories/:id': request(t.app)
        .delete('/v1/memories/0b0a3d8e-97a4-4d3f-9a51-0c6fb4cde111')
        .set(headers),
      'POST /v1/search': request(t.app)
        .post('/v1/search')
        .set(headers)
        .send({ query: 'subscription' }),
      'POST /v1/context': request(t.app)
        .post('/v1/context')
        .set(headers)
        .send({ query: 'subscription' }),
      'POST /v1/feedback': request(t.app)
        .post('/v1/feedback')
        .set(headers)
        .send({ feedback: 'positive', request_id: 'x' }),
      'POST /mcp': request(t.app).post('/mcp').set(headers).set('accept', ACCEPT).send(INITIALIZE),
      'POST /v1/mcp': request(t.app)
        .post('/v1/mcp')
        .set(headers)
        .set('accept', ACCEPT)
        .send(INITIALIZE),
      'GET /mcp': request(t.app)
        .get('/mcp')
        .set(headers)
        .set('accept', 'text/event-stream')
        .set('mcp-session-id', 'x'),
    };
    for (const [route, attempt] of Object.entries(attempts)) {
      const res = await attempt;
      expect(res.status, route).toBe(401);
      expect(res.body.error.code, route).toBe('UNAUTHORIZED');
    }
    // With a valid key the headers are simply ignored.
    const keyed = await request(t.app)
      .get('/v1/memories')
      .set(headers)
      .set('x-api-key', t.tenant.apiKey);
    expect(keyed.status).toBe(200);
  });

  it('is off when no secret is configured: the headers grant nothing, even on POST /v1/memories', async () => {
    const res = await request(disabled.app)
      .post('/v1/memories')
      .set(internal(disabled, ''))
      .send({ text: 'Nope.' });
    expect(res.status).toBe(401);
    const guessed = await request(disabled.app)
      .post('/v1/memories')
      .set(internal(disabled, SECRET))
      .send({ text: 'Nope.' });
    expect(guessed.status).toBe(401);
    const keyed = await request(disabled.app)
      .post('/v1/memories')
      .set(internal(disabled, SECRET))
      .set('x-api-key', disabled.tenant.apiKey)
      .send({ text: 'Stored with the key.' });
    expect(keyed.status).toBe(200);
  });
});

import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { cookiesOf, DASHBOARD_ENV, signToken } from './support.js';

describeDb('what one dashboard user may own', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      ...DASHBOARD_ENV,
      MNEMO_DASHBOARD_MAX_WORKSPACES_PER_USER: '3',
      MNEMO_DASHBOARD_MAX_KEYS_PER_WORKSPACE: '2',
    });
  });
  afterAll(async () => t?.close());

  async function signIn(user: string) {
    const token = await signToken(user);
    const boot = await request(t.app).post('/v1/dashboard/bootstrap').send({ access_token: token });
    const workspaceId = boot.body.data.workspace.id as string;
    const session = await request(t.app)
      .post('/v1/dashboard/session')
      .send({ access_token: token, workspace_id: workspaceId });
    return {
      cookie: `svc_dash_session=${cookiesOf(session).svc_dash_session}`,
      csrf: session.body.data.csrf_token as string,
      workspaceId,
    };
  }

  it('workspaces: up to the configured count, racing requests included, then 429', async () => {
    // No limit before: one user could make workspaces (each with full daily caps) without end.
    const s = await signIn('owner-many');
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        request(t.app)
          .post('/v1/dashboard/workspaces')
          .set('cookie', s.cookie)
          .set('x-csrf-token', s.csrf)
          .send({ name: `W${i}` }),
      ),
    );
    // The first sign-in's workspace counts: two more.
    expect(answers.filter((res) => res.status === 200)).toHaveLength(2);
    const refused = answers.filter((res) => res.status === 429);
    expect(refused).toHaveLength(4);
    expect(refused[0]!.body).toMatchObject({ ok: false, error: { code: 'CAP_EXCEEDED' } });
    expect(refused[0]!.body.error.message).toContain('at most 3 workspaces');
    const list = await request(t.app).get('/v1/dashboard/workspaces').set('cookie', s.cookie);
    expect(list.body.data.workspaces).toHaveLength(3);
  });

  it('keys: up to the configured live count per workspace; a revoked key frees its place', async () => {
    const s = await signIn('owner-keys');
    const mint = (name: string) =>
      request(t.app)
        .post('/v1/dashboard/api-keys')
        .set('cookie', s.cookie)
        .set('x-csrf-token', s.csrf)
        .send({ workspace_id: s.workspaceId, name });
    const first = await mint('a');
    expect((await mint('b')).status).toBe(200);
    const over = await mint('c');
    expect(over.status).toBe(429);
    expect(over.body.error.message).toContain('at most 2 live API keys');
    await request(t.app)
      .post('/v1/dashboard/api-keys/revoke')
      .set('cookie', s.cookie)
      .set('x-csrf-token', s.csrf)
      .send({ api_key_id: first.body.data.api_key.id })
      .expect(200);
    expect((await mint('c')).status).toBe(200);
  });
});

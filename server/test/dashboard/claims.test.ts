import { count, eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceMembers } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { DASHBOARD_ENV, signToken } from './support.js';

describeDb('dashboard sign-in: JWT claims as identifiers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(DASHBOARD_ENV);
  });
  afterAll(async () => t?.close());

  const bootstrap = (token: string) =>
    request(t.app).post('/v1/dashboard/bootstrap').send({ access_token: token });
  const session = (token: string, workspaceId: string) =>
    request(t.app)
      .post('/v1/dashboard/session')
      .send({ access_token: token, workspace_id: workspaceId });

  const unusable = {
    'a NUL byte': 'user\u0000one',
    'a control character': 'user\u001bone',
    'a C1 control character': 'user\u0085one',
    'a lone high surrogate': 'user\ud800',
    'a lone low surrogate': 'user\udc00',
    '257 characters': 'u'.repeat(257),
  };

  describe('refuses a subject with', () => {
    for (const [what, sub] of Object.entries(unusable)) {
      it(what, async () => {
        // A NUL in `sub` was a 500 on bootstrap and session.
        const token = await signToken(sub);
        const boot = await bootstrap(token);
        expect(boot.status).toBe(401);
        expect(boot.body).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
        const opened = await session(token, '00000000-0000-4000-8000-000000000000');
        expect(opened.status).toBe(401);
      });
    }
  });

  it('refuses an unusable email claim, and accepts a well-formed one', async () => {
    const bad = await bootstrap(await signToken('user-mail', { claims: { email: 'a\u0000@b.c' } }));
    expect(bad.status).toBe(401);
    const good = await bootstrap(await signToken('user-mail', { claims: { email: 'a@b.c' } }));
    expect(good.status).toBe(200);
  });

  it('keeps two subjects apart that differ only in lone surrogates', async () => {
    // Both were stored as one replacement character: two users shared a workspace.
    const [first, second] = await Promise.all([
      bootstrap(await signToken('user\ud800x')),
      bootstrap(await signToken('user\ud801x')),
    ]);
    expect([first.status, second.status]).toEqual([401, 401]);
    const astral = await bootstrap(await signToken('user\u{1f600}x'));
    expect(astral.status).toBe(200);
    const other = await bootstrap(await signToken('user\u{1f601}x'));
    expect(other.status).toBe(200);
    expect(other.body.data.workspace.id).not.toBe(astral.body.data.workspace.id);
  });

  it('makes one workspace for concurrent first sign-ins of one user', async () => {
    const token = await signToken('user-racing');
    const answers = await Promise.all(Array.from({ length: 16 }, () => bootstrap(token)));
    expect(answers.map((res) => res.status)).toEqual(Array(16).fill(200));
    const ids = new Set(answers.map((res) => res.body.data.workspace.id as string));
    expect(ids.size).toBe(1);
    expect(answers.filter((res) => res.body.data.created === true)).toHaveLength(1);
    const [memberships] = await t.database.db
      .select({ n: count() })
      .from(workspaceMembers)
      .where(eq(workspaceMembers.userId, 'user-racing'));
    expect(memberships!.n).toBe(1);
  });
});

import { contract } from '@mnemo/contract';
import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

const LOG = contract.audit.getAuditLog.path;

describeDb('GET /v1/audit/log', () => {
  let t: TestApp;
  let other: TestTenant;
  /** After the setup traffic: reading the log is audited too, so counts stop here. */
  let setupDone: string;
  const bearer = (tenant: TestTenant) => `Bearer ${tenant.apiKey}`;
  const get = (tenant: TestTenant, query: Record<string, string> = {}) =>
    request(t.app).get(LOG).query(query).set('authorization', bearer(tenant));
  /** The setup's rows only. */
  const setup = (query: Record<string, string> = {}) => get(t.tenant, { to: setupDone, ...query });

  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
    // Traffic of both tenants: a write (audited in its own transaction), a read, a 404 and a 400.
    const write = await request(t.app)
      .post('/v1/memories')
      .set('authorization', bearer(t.tenant))
      .send({ user_id: 'alice', text: 'Alice prefers tea over coffee, secret sauce inside' });
    expect(write.status).toBe(200);
    await request(t.app).get('/v1/memories').set('authorization', bearer(t.tenant)).expect(200);
    await request(t.app)
      .get('/v1/memories/00000000-0000-4000-8000-000000000000')
      .set('authorization', bearer(t.tenant))
      .expect(404);
    await request(t.app)
      .get('/v1/memories?page=0')
      .set('authorization', bearer(t.tenant))
      .expect(400);
    await request(t.app).get('/v1/memories').set('authorization', bearer(other)).expect(200);
    await t.deps.audit.drain();
    await new Promise((resolve) => setTimeout(resolve, 5));
    setupDone = new Date().toISOString();
  }, 120_000);
  afterAll(async () => t?.close());

  it('lists only the caller’s rows, newest first, in the contract shape, without user content', async () => {
    const res = await get(t.tenant);
    expect(res.status).toBe(200);
    expect(contract.audit.getAuditLog.responses[200].parse(res.body)).toBeTruthy();
    const rows = res.body.results as Array<Record<string, unknown>>;
    expect(rows.length).toBe(4);
    expect(res.body).toMatchObject({ page: 1, page_size: 50, total: 4, has_more: false });
    const times = rows.map((row) => Date.parse(row.created_at as string));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // The other tenant's request is not here; its own list has only its own rows.
    const mine = await t.database.db
      .select({ id: auditLog.id })
      .from(auditLog)
      .where(eq(auditLog.workspaceId, other.workspaceId));
    expect(rows.map((row) => row.id)).not.toEqual(expect.arrayContaining([mine[0]?.id]));
    const theirs = await get(other);
    expect(
      theirs.body.results.map((row: { path: string; status: number }) => [row.path, row.status]),
    ).toEqual([['/v1/memories', 200]]);
    // Neither the memory text nor the key appears anywhere in the rows.
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('secret sauce');
    expect(text).not.toContain(t.tenant.apiKey);
    expect(text).not.toContain('page=0');
  });

  it('records the route pattern, also for writes audited in their own transaction', async () => {
    const res = await get(t.tenant);
    const routes = res.body.results.map((row: { route: string | null }) => row.route);
    expect(routes).toEqual(expect.arrayContaining(['/v1/memories', '/v1/memories/:id']));
    const write = res.body.results.find((row: { method: string }) => row.method === 'POST') as {
      route: string;
      status: number;
    };
    expect(write).toMatchObject({ route: '/v1/memories', status: 200 });
  });

  it('filters by route (either pattern form), method, status code or class, and time', async () => {
    const byRoute = await setup({ route: '/v1/memories/{id}' });
    expect(byRoute.body.results.map((row: { status: number }) => row.status)).toEqual([404]);
    expect((await setup({ route: '/v1/memories/:id' })).body.total).toBe(1);
    expect((await setup({ method: 'POST' })).body.total).toBe(1);
    expect((await setup({ status: '4xx' })).body.total).toBe(2);
    expect((await setup({ status: '400' })).body.total).toBe(1);
    expect((await setup({ status: '2XX' })).body.total).toBe(2);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await get(t.tenant, { from: future })).body.total).toBe(0);
    // The reads above are audited in the background: flushed, they count beside the setup's 4.
    await t.deps.audit.drain();
    expect((await get(t.tenant, { to: future })).body.total).toBeGreaterThan(4);
    expect((await setup({ to: '2000-01-01' })).body.total).toBe(0);
  });

  it('pages with bounded page sizes', async () => {
    const first = await setup({ page_size: '3' });
    expect(first.body).toMatchObject({ page: 1, page_size: 3, total: 4, has_more: true });
    expect(first.body.results).toHaveLength(3);
    const second = await setup({ page_size: '3', page: '2' });
    expect(second.body).toMatchObject({ page: 2, total: 4, has_more: false });
    expect(second.body.results).toHaveLength(1);
    const ids = [...first.body.results, ...second.body.results].map((r: { id: string }) => r.id);
    expect(new Set(ids).size).toBe(4);
  });

  describe('bad input is a 400 envelope', () => {
    it.each([
      [{ page_size: '201' }, 'page_size'],
      [{ page: '0' }, 'page'],
      [{ status: '600' }, 'status'],
      [{ status: '4x' }, 'status'],
      [{ from: 'yesterday' }, 'from'],
      [{ from: '2026-02-30' }, 'from'],
      [{ from: '2026-02-01', to: '2026-01-01' }, 'from'],
      [{ method: 'TRACE' }, 'method'],
      [{ route: 'x'.repeat(257) }, 'route'],
      [{ workspace_id: '00000000-0000-4000-8000-000000000000' }, 'query'],
    ])('%o', async (query, field) => {
      const res = await get(t.tenant, query);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
      expect(Object.keys(res.body.error.details ?? {})).toContain(field);
      expect(res.body.request_id).toBe(res.headers['x-request-id']);
    });
  });

  it('needs credentials', async () => {
    const res = await request(t.app).get(LOG);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });
});

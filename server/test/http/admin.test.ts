import { OPERATOR_TAG, contract } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

// The admin area is a contract route like the others; its behaviour (hygiene reports and fixes)
// is pinned in test/lifecycle/extraction-hygiene.test.ts.
describeDb('admin routes (operator, x-admin-token)', () => {
  const TOKEN = 'admin-token-0123456789';
  const PATH = contract.admin.runMemoryHygiene.path;
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN });
  });
  afterAll(async () => t?.close());

  it('checks the token before the query: without it, a bad query is still 401', async () => {
    const res = await request(t.app).post(`${PATH}?limit=0&nope=1`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'Missing or invalid x-admin-token' },
      request_id: res.headers['x-request-id'],
    });
  });

  it('answers a bad query with the one error envelope, unknown parameters included', async () => {
    const res = await request(t.app)
      .post(`${PATH}?limit=10001&workspace=typo`)
      .set('x-admin-token', TOKEN);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details).toEqual({
      limit: [expect.stringContaining('10000')],
      query: ['unknown field(s): workspace'],
    });
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
  });

  it('runs with the defaults and reports in the contract shape', async () => {
    const res = await request(t.app).post(`${PATH}?dry_run=1`).set('x-admin-token', TOKEN);
    expect(res.status).toBe(200);
    expect(contract.admin.runMemoryHygiene.responses[200].parse(res.body)).toEqual(res.body);
    expect(res.body).toMatchObject({ dry_run: true, expired: { count: 0 } });
  });

  it('is a known path: another method is 405 with Allow', async () => {
    const res = await request(t.app).get(PATH).set('x-admin-token', TOKEN);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('POST');
  });

  it('is listed in the OpenAPI document as an operator route behind the admin token', async () => {
    const res = await request(t.app).get('/v1/openapi.json');
    const operation = res.body.paths[PATH].post;
    expect(operation.tags).toContain(OPERATOR_TAG);
    expect(operation['x-operator']).toBe(true);
    expect(operation.security).toEqual([{ adminToken: [] }]);
    expect(res.body.components.securitySchemes.adminToken).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-admin-token',
    });
  });
});

describeDb('admin routes without MNEMO_ADMIN_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('refuse everyone', async () => {
    const res = await request(t.app)
      .post(contract.admin.runMemoryHygiene.path)
      .set('x-admin-token', 'anything-at-all');
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/MNEMO_ADMIN_TOKEN is not set/);
  });
});

describe('admin contract', () => {
  it('keeps the spec path', () => {
    expect(contract.admin.runMemoryHygiene.path).toBe('/admin/memory-hygiene');
  });
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listAuditRecords } from '../../src/db/queries/audit.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeDb('cross-cutting HTTP behaviour', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      MNEMO_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000/',
      MNEMO_MAX_BODY_BYTES: '2048',
    });
  });
  afterAll(async () => t?.close());

  const auth = () => ({ authorization: `Bearer ${t.tenant.apiKey}` });

  it('puts a generated x-request-id on every response', async () => {
    const res = await request(t.app).get('/nowhere');
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
  });

  it('echoes a sane incoming x-request-id and replaces an unsafe one', async () => {
    const sane = await request(t.app).get('/healthz').set('x-request-id', 'trace-42.abc:1');
    expect(sane.headers['x-request-id']).toBe('trace-42.abc:1');
    const unsafe = await request(t.app).get('/healthz').set('x-request-id', 'bad id<script>');
    expect(unsafe.headers['x-request-id']).toMatch(UUID);
    const tooLong = await request(t.app).get('/healthz').set('x-request-id', 'a'.repeat(200));
    expect(tooLong.headers['x-request-id']).toMatch(UUID);
  });

  it('answers the health routes before any other check', async () => {
    // A denied Origin, no key and an oversized declared body would each stop other routes.
    const res = await request(t.app).get('/healthz').set('origin', 'https://evil.example');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', version: expect.any(String) });
    const versioned = await request(t.app).get('/v1/health').set('origin', 'https://evil.example');
    expect(versioned.status).toBe(200);
    expect(versioned.body.embedding_model).toBe('local/mnemo-local-v3');
    const ready = await request(t.app).get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', key_salt: 'ok' } });
  });

  it('denies a request whose Origin is not allowed with 403 FORBIDDEN', async () => {
    const res = await request(t.app)
      .get('/v1/memories')
      .set(auth())
      .set('origin', 'https://evil.example');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: { code: 'FORBIDDEN', message: 'Origin https://evil.example is not allowed' },
      request_id: res.headers['x-request-id'],
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('lets an allowed Origin through with CORS headers', async () => {
    const res = await request(t.app)
      .get('/v1/memories')
      .set(auth())
      .set('origin', 'http://localhost:3000');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:3000');
    expect(res.headers['access-control-expose-headers']).toContain('x-request-id');
  });

  it('refuses a disallowed Origin on hosted MCP paths too, in JSON-RPC (DNS rebinding)', async () => {
    const res = await request(t.app).options('/mcp').set('origin', 'https://evil.example');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe(-32000);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers OPTIONS directly, without auth, naming the allowed methods', async () => {
    const res = await request(t.app)
      .options('/v1/memories/abc')
      .set('origin', 'https://app.example.com')
      .set('access-control-request-method', 'DELETE');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-methods']).toBe('DELETE, GET, HEAD, OPTIONS');
    expect(res.headers['access-control-allow-headers']).toContain('authorization');
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const unknown = await request(t.app).options('/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
  });

  it('refuses a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(4000) });
    const res = await request(t.app)
      .post('/v1/memories')
      .set(auth())
      .set('content-type', 'application/json')
      .send(big);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body exceeds the limit of 2048 bytes' },
      request_id: res.headers['x-request-id'],
    });
  });

  it('refuses an oversized chunked body (no Content-Length) with 413', async () => {
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: '/v1/memories',
            headers: { ...auth(), 'content-type': 'application/json' },
          },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => (body += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        // Two writes without a length: Node sends Transfer-Encoding: chunked.
        req.write('{"text": "' + 'y'.repeat(3000));
        req.end('"}');
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    } finally {
      server.close();
    }
  });

  it('answers malformed JSON with 400 BAD_REQUEST, not 500', async () => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set(auth())
      .set('content-type', 'application/json')
      .send('{"text": "unterminated');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: 'Malformed JSON in request body',
        details: { body: ['is not valid JSON'] },
      },
      request_id: res.headers['x-request-id'],
    });
  });

  it('answers a path that cannot be decoded with 400, not 500', async () => {
    const res = await request(t.app).get('/v1/memories/%E0%A4%A').set(auth());
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
  });

  it('answers a known path with an unsupported method with 405 and Allow', async () => {
    const health = await request(t.app).post('/healthz');
    expect(health.status).toBe(405);
    expect(health.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(health.body.error.code).toBe('METHOD_NOT_ALLOWED');
    // 405 comes before auth: no key needed to learn the allowed methods.
    const memory = await request(t.app).put('/v1/memories/0b0a3d8e-97a4-4d3f-9a51-0c6fb4cde111');
    expect(memory.status).toBe(405);
    expect(memory.headers.allow).toBe('DELETE, GET, HEAD, OPTIONS');
  });

  it('answers an unknown path with 404 NOT_FOUND in the envelope', async () => {
    const res = await request(t.app).get('/v2/whatever').set(auth());
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { code: 'NOT_FOUND', message: 'No route for GET /v2/whatever' },
      request_id: res.headers['x-request-id'],
    });
  });

  it('maps validation failures to 400 with details per field', async () => {
    const res = await request(t.app)
      .get('/v1/memories')
      .query({ page: '0', page_size: '500', owner_type: 'robot', metadata: 'not-json' })
      .set(auth());
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(Object.keys(res.body.error.details).sort()).toEqual([
      'metadata',
      'owner_type',
      'page',
      'page_size',
    ]);
    expect(res.body.error.details.metadata).toEqual(['must be a JSON-encoded object']);
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
  });

  it('refuses owner aliases that disagree, naming the fields', async () => {
    const res = await request(t.app)
      .get('/v1/memories')
      .query({ user_id: 'a', owner_id: 'b' })
      .set(auth());
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({
      owner_id: ['disagrees with user_id: user_id, owner_id are aliases and must be equal'],
    });
  });

  it('leaves an audit record for every request, including refused ones', async () => {
    const ok = await request(t.app)
      .get('/v1/memories')
      .set(auth())
      .set('x-request-id', 'audit-ok-1');
    const refused = await request(t.app).get('/v1/memories').set('x-request-id', 'audit-401-1');
    const health = await request(t.app).get('/healthz').set('x-request-id', 'audit-health-1');
    expect([ok.status, refused.status, health.status]).toEqual([200, 401, 200]);
    await t.deps.audit.drain();

    const [okRow] = await listAuditRecords(t.database.db, { requestId: 'audit-ok-1' });
    expect(okRow).toMatchObject({
      method: 'GET',
      path: '/v1/memories',
      status: 200,
      workspaceId: t.tenant.workspaceId,
    });
    expect(okRow?.apiKeyId).toMatch(UUID);
    expect(okRow?.durationMs).toBeGreaterThanOrEqual(0);
    const [refusedRow] = await listAuditRecords(t.database.db, { requestId: 'audit-401-1' });
    expect(refusedRow).toMatchObject({ status: 401, workspaceId: null });
    const [healthRow] = await listAuditRecords(t.database.db, { requestId: 'audit-health-1' });
    expect(healthRow).toMatchObject({ path: '/healthz', status: 200 });
  });
});

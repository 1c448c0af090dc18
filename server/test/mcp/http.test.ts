import request from 'supertest';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { ACCEPT, INITIALIZE, connect, listen, type Listening } from './support.js';

const UNKNOWN_SESSION = '5b1f2c9e-0d7a-4a57-9a4e-6c1b2f3d4e5f';

describeDb('MCP over HTTP: sessions, methods and the request order', () => {
  let t: TestApp;
  let http: Listening;
  beforeAll(async () => {
    t = await createTestApp({
      MNEMO_ALLOWED_ORIGINS: 'https://app.example.com',
      MNEMO_MAX_BODY_BYTES: '4096',
    });
    http = await listen(t.app);
  });
  afterAll(async () => {
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  const key = () => ({ authorization: `Bearer ${t.tenant.apiKey}` });

  /** A session opened by hand: its id, for raw requests. */
  async function openSession(path = '/mcp'): Promise<string> {
    const res = await request(t.app).post(path).set(key()).set('accept', ACCEPT).send(INITIALIZE);
    expect(res.status).toBe(200);
    const id = res.headers['mcp-session-id'];
    expect(id).toEqual(expect.any(String));
    return id as string;
  }

  const rpc = (sessionId: string, method: string, id = 2) =>
    request(t.app)
      .post('/mcp')
      .set(key())
      .set('accept', ACCEPT)
      .set('mcp-session-id', sessionId)
      .send({ jsonrpc: '2.0', id, method, params: {} });

  it('answers a request without a valid key with 401 in the error envelope', async () => {
    const missing = await request(t.app).post('/mcp').set('accept', ACCEPT).send(INITIALIZE);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({
      error: {
        code: 'UNAUTHORIZED',
        message: 'Missing API key: send Authorization: Bearer <key> or x-api-key: <key>',
      },
      request_id: missing.headers['x-request-id'],
    });
    const wrong = await request(t.app)
      .post('/v1/mcp')
      .set('x-api-key', 'mnemo_not-a-real-key')
      .set('accept', ACCEPT)
      .send(INITIALIZE);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('UNAUTHORIZED');
    const sessionId = await openSession();
    for (const res of [
      await request(t.app)
        .get('/mcp')
        .set('accept', 'text/event-stream')
        .set('mcp-session-id', sessionId),
      await request(t.app).delete('/mcp').set('mcp-session-id', sessionId),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
    // The session survived the unauthenticated attempts.
    expect((await rpc(sessionId, 'ping')).status).toBe(200);
  });

  it('accepts x-api-key too, echoes x-request-id and answers in an event stream', async () => {
    const res = await request(t.app)
      .post('/mcp')
      .set('x-api-key', t.tenant.apiKey)
      .set('x-request-id', 'mcp-init-1')
      .set('accept', ACCEPT)
      .send(INITIALIZE);
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('mcp-init-1');
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(res.text).toContain('"serverInfo":{"name":"mnemo"');
  });

  it('closes a session on DELETE (200), after which its id is 404', async () => {
    const { client, transport } = await connect(`${http.baseUrl}/mcp`, t.tenant.apiKey);
    const sessionId = transport.sessionId ?? '';
    expect(sessionId).not.toBe('');
    await transport.terminateSession();
    await client.close();
    const after = await rpc(sessionId, 'tools/list');
    expect(after.status).toBe(404);
    expect(after.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Session not found' },
      id: null,
    });

    const raw = await openSession();
    const closed = await request(t.app).delete('/mcp').set(key()).set('mcp-session-id', raw);
    expect(closed.status).toBe(200);
    expect((await request(t.app).delete('/mcp').set(key()).set('mcp-session-id', raw)).status).toBe(
      404,
    );
  });

  it('answers an unknown session id with 404, and a missing one (other than initialize) with 400', async () => {
    const unknown = await rpc(UNKNOWN_SESSION, 'tools/list');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe(-32001);
    const stream = await request(t.app)
      .get('/mcp')
      .set(key())
      .set('accept', 'text/event-stream')
      .set('mcp-session-id', UNKNOWN_SESSION);
    expect(stream.status).toBe(404);
    const none = await request(t.app)
      .post('/mcp')
      .set(key())
      .set('accept', ACCEPT)
      .send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
  });

  it('answers malformed JSON with a JSON-RPC parse error (-32700) and HTTP 400', async () => {
    const sessionId = await openSession();
    for (const headers of [{}, { 'mcp-session-id': sessionId }]) {
      const res = await request(t.app)
        .post('/mcp')
        .set(key())
        .set(headers)
        .set('accept', ACCEPT)
        .set('content-type', 'application/json')
        .send('{"jsonrpc": "2.0", "method": ');
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32700, message: expect.stringMatching(/^Parse error/) },
        id: null,
      });
    }
    const empty = await request(t.app)
      .post('/v1/mcp')
      .set(key())
      .set('accept', ACCEPT)
      .set('content-type', 'application/json');
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe(-32700);
  });

  it('refuses a body over the limit with 413 before parsing it', async () => {
    const big = JSON.stringify({
      ...INITIALIZE,
      params: { ...INITIALIZE.params, padding: 'x'.repeat(5000) },
    });
    const res = await request(t.app)
      .post('/mcp')
      .set(key())
      .set('accept', ACCEPT)
      .set('content-type', 'application/json')
      .send(big);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers a WebSocket upgrade attempt with 426', async () => {
    const res = await request(t.app)
      .get('/mcp')
      .set('connection', 'Upgrade')
      .set('upgrade', 'websocket')
      .set('sec-websocket-version', '13')
      .set('sec-websocket-key', 'dGhlIHNhbXBsZSBub25jZQ==');
    expect(res.status).toBe(426);
    expect(res.body.error.code).toBe('UPGRADE_REQUIRED');
    expect(res.body.error.message).toContain('streamable HTTP');
  });

  it('shows a browser an HTML landing page, without a key', async () => {
    for (const path of ['/mcp', '/v1/mcp']) {
      const res = await request(t.app)
        .get(path)
        .set('accept', 'text/html,application/xhtml+xml,*/*;q=0.8');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.text).toContain('<h1>Mnemo MCP endpoint</h1>');
      expect(res.text).toContain(`claude mcp add --transport http mnemo http://127.0.0.1`);
      expect(res.text).toContain('<code>search_memories</code>');
      expect(res.text).toContain('README');
    }
    // The Host header is echoed into the page escaped.
    const hostile = await request(t.app)
      .get('/mcp')
      .set('host', 'evil"><script>x</script>')
      .set('accept', 'text/html');
    expect(hostile.text).not.toContain('<script>x');
  });

  it("gives the session's event stream to GET with Accept: text/event-stream", async () => {
    const sessionId = await openSession();
    const controller = new AbortController();
    const res = await fetch(`${http.baseUrl}/mcp`, {
      headers: { ...key(), accept: 'text/event-stream', 'mcp-session-id': sessionId },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('mcp-session-id')).toBe(sessionId);
    expect(res.headers.get('x-request-id')).toEqual(expect.any(String));
    controller.abort();
  });

  it('answers other methods with 405 and Allow, before auth', async () => {
    for (const path of ['/mcp', '/v1/mcp']) {
      const res = await request(t.app).put(path);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('DELETE, GET, HEAD, OPTIONS, POST');
      expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('applies the MCP Origin rule, not the REST one: a local tool passes on a loopback-bound server', async () => {
    const local = 'http://localhost:6274';
    const preflight = await request(t.app)
      .options('/mcp')
      .set('origin', local)
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'authorization, content-type, mcp-session-id');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(local);
    expect(preflight.headers['access-control-allow-methods']).toBe(
      'DELETE, GET, HEAD, OPTIONS, POST',
    );
    const init = await request(t.app)
      .post('/mcp')
      .set(key())
      .set('origin', local)
      .set('accept', ACCEPT)
      .send(INITIALIZE);
    expect(init.status).toBe(200);
    expect(init.headers['access-control-expose-headers']).toContain('mcp-session-id');
    // REST routes take only the listed origins.
    const rest = await request(t.app).get('/v1/memories').set(key()).set('origin', local);
    expect(rest.status).toBe(403);
    // Anywhere else is refused on MCP too (DNS rebinding); see origin-limits-logs.test.ts.
    const elsewhere = await request(t.app)
      .post('/mcp')
      .set(key())
      .set('origin', 'https://elsewhere.example')
      .set('accept', ACCEPT)
      .send(INITIALIZE);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.code).toBe(-32000);
  });

  it('serves a trailing slash as the same path, and nothing else', async () => {
    expect(
      (await request(t.app).post('/mcp/').set(key()).set('accept', ACCEPT).send(INITIALIZE)).status,
    ).toBe(200);
    const upper = await request(t.app)
      .post('/MCP')
      .set(key())
      .set('accept', ACCEPT)
      .send(INITIALIZE);
    expect(upper.status).toBe(404);
    expect(upper.body.error.code).toBe('NOT_FOUND');
  });

  it('forgets sessions idle longer than the TTL', async () => {
    const sessionId = await openSession();
    expect((await rpc(sessionId, 'ping')).status).toBe(200);
    const later = Date.now() + t.deps.config.mcp.sessionTtlMs + 1000;
    const clock = vi.spyOn(Date, 'now').mockReturnValue(later);
    try {
      expect((await rpc(sessionId, 'ping')).status).toBe(404);
    } finally {
      clock.mockRestore();
    }
  });
});

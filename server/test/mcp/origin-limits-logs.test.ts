import { Writable } from 'node:stream';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { isLoopbackHost } from '../../src/http/origin.js';
import { createLogger } from '../../src/logger.js';
import {
  createEmbeddingProvider,
  type EmbeddingProvider,
} from '../../src/providers/embeddings/index.js';
import { createTestApp, testConfig, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { ACCEPT, INITIALIZE, connect, listen, textOf } from './support.js';

describe('isLoopbackHost', () => {
  it('knows the loopback names and addresses, and nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'localhost.evil.example', '1127.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});

// Apps are slow to make (a fresh database each): a few, made once, shared by the tests.
const made = new Map<string, Promise<TestApp>>();
function app(env: Record<string, string>): Promise<TestApp> {
  const key = JSON.stringify(env);
  if (!made.has(key)) made.set(key, createTestApp(env));
  return made.get(key)!;
}
afterAll(async () => {
  for (const pending of made.values()) {
    const t = await pending;
    await t.mcpSessions.closeAll();
    await t.close();
  }
}, 120_000);
const LOOPBACK = { HOST: '127.0.0.1', MNEMO_ALLOWED_ORIGINS: 'https://app.example.com' };
const SLOW = 120_000;

const initialize = (t: TestApp, origin?: string, path = '/mcp') => {
  const req = request(t.app)
    .post(path)
    .set('authorization', `Bearer ${t.tenant.apiKey}`)
    .set('accept', ACCEPT);
  if (origin !== undefined) req.set('origin', origin);
  return req.send(INITIALIZE);
};

function expectRefusedOrigin(res: request.Response) {
  expect(res.status).toBe(403);
  expect(res.body).toEqual({
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Forbidden: this Origin may not use the MCP server' },
    id: null,
  });
  // Never reflected, so a browser never shows the answer to the page.
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
  expect(res.headers['mcp-session-id']).toBeUndefined();
}

describeDb('MCP Origin validation (DNS rebinding)', () => {
  it(
    'on a loopback-bound server: no Origin, listed Origins and localhost pass; others get 403',
    async () => {
      const t = await app(LOOPBACK);
      expect((await initialize(t)).status).toBe(200);

      const listed = await initialize(t, 'https://app.example.com');
      expect(listed.status).toBe(200);
      expect(listed.headers['access-control-allow-origin']).toBe('https://app.example.com');

      for (const local of ['http://localhost:6274', 'http://127.0.0.1:5173', 'http://[::1]:3000']) {
        const res = await initialize(t, local);
        expect(res.status, local).toBe(200);
        expect(res.headers['access-control-allow-origin']).toBe(local);
      }

      for (const origin of [
        'https://evil.example',
        'http://localhost.evil.example',
        'null',
        'not a url',
      ]) {
        expectRefusedOrigin(await initialize(t, origin));
        expectRefusedOrigin(await initialize(t, origin, '/v1/mcp/'));
      }
    },
    SLOW,
  );

  it(
    'checks before anything else on MCP paths: preflight, landing page, stream and DELETE',
    async () => {
      const t = await app(LOOPBACK);
      const evil = 'https://evil.example';
      expectRefusedOrigin(
        await request(t.app)
          .options('/mcp')
          .set('origin', evil)
          .set('access-control-request-method', 'POST'),
      );
      expectRefusedOrigin(await request(t.app).get('/v1/mcp').set('origin', evil));
      expectRefusedOrigin(
        await request(t.app).get('/mcp').set('origin', evil).set('accept', 'text/event-stream'),
      );
      expectRefusedOrigin(await request(t.app).delete('/mcp').set('origin', evil));
      // No key needed to be refused: the check answers before auth (and the key is not consulted).
      expectRefusedOrigin(await request(t.app).post('/mcp').set('origin', evil).send(INITIALIZE));

      const preflight = await request(t.app)
        .options('/mcp')
        .set('origin', 'https://app.example.com')
        .set('access-control-request-method', 'POST');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
    },
    SLOW,
  );

  it(
    'does not take a forged Host as "same origin"',
    async () => {
      const t = await app(LOOPBACK);
      // A rebinding page at http://evil.example:8787 sends this pair; REST would call it same-origin.
      const res = await initialize(t, 'http://evil.example:8787').set('host', 'evil.example:8787');
      expectRefusedOrigin(res);
    },
    SLOW,
  );

  it(
    'on a server bound beyond loopback, a localhost Origin must be listed like any other',
    async () => {
      const open = await app({
        HOST: '0.0.0.0',
        MNEMO_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000',
      });
      expectRefusedOrigin(await initialize(open, 'http://localhost:6274'));
      expectRefusedOrigin(await initialize(open, 'http://127.0.0.1:6274'));
      expect((await initialize(open, 'http://localhost:3000')).status).toBe(200);
      expect((await initialize(open)).status).toBe(200);
    },
    SLOW,
  );
});

describeDb('MCP per-key and per-workspace limits', () => {
  it(
    'a key over its rate gets 429 with Retry-After on MCP; another key is unaffected, until the workspace rate',
    async () => {
      const t = await app({
        MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '3',
        MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '5',
      });
      const second = await t.deps.apiKeys.mint(t.tenant.workspaceId, 'second');
      const third = await t.deps.apiKeys.mint(t.tenant.workspaceId, 'third');
      const otherTenant = await t.addTenant('other');
      const post = (key: string) =>
        request(t.app)
          .post('/mcp')
          .set('authorization', `Bearer ${key}`)
          .set('accept', ACCEPT)
          .send(INITIALIZE);
      const expectLimited = (refused: request.Response, message: RegExp) => {
        expect(refused.status).toBe(429);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(refused.body.error.code).toBe('RATE_LIMITED');
        expect(refused.body.error.message).toMatch(message);
        expect(refused.body.request_id).toBe(refused.headers['x-request-id']);
      };

      const first = await post(t.tenant.apiKey);
      expect(first.status).toBe(200);
      expect(first.headers['ratelimit-policy']).toContain('"key";q=3;w=60');
      const session = first.headers['mcp-session-id'] as string;
      expect((await post(t.tenant.apiKey)).status).toBe(200);
      // DELETE counts too (the session's own key).
      const closed = await request(t.app)
        .delete('/mcp')
        .set('authorization', `Bearer ${t.tenant.apiKey}`)
        .set('mcp-session-id', session);
      expect(closed.status).toBe(200);

      // The key's 4th and 5th requests: refused by the key rate, not counted for the workspace.
      expectLimited(await post(t.tenant.apiKey), /3 requests per minute per API key/);
      expectLimited(
        await request(t.app)
          .delete('/v1/mcp')
          .set('authorization', `Bearer ${t.tenant.apiKey}`)
          .set('mcp-session-id', session),
        /3 requests per minute per API key/,
      );

      // Another key of the workspace has its own rate...
      const fine = await post(second.plaintext);
      expect(fine.status).toBe(200);
      expect(fine.headers['mcp-session-id']).toEqual(expect.any(String));
      expect((await post(third.plaintext)).status).toBe(200);
      // ...within the workspace's 5 per minute; another workspace is not touched.
      expectLimited(await post(third.plaintext), /5 requests per minute per workspace/);
      expect((await post(otherTenant.apiKey)).status).toBe(200);
    },
    SLOW,
  );
});

describeDb('MCP logs: tool name, status and duration, never arguments or memory text', () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  afterEach(() => {
    lines.length = 0;
  });

  it(
    'logs each tool call by name in the completion line and nothing the caller sent',
    async () => {
      const t = await app(LOOPBACK);
      const logger = createLogger('debug', sink);
      const server = await listen(createApp({ ...t.deps, logger }));
      try {
        const marker = 'zebra-marmalade-4471';
        const owner = 'owner-secret-9f3a';
        const { client } = await connect(`${server.baseUrl}/mcp`, t.tenant.apiKey);
        const added = await client.callTool({
          name: 'add_memory',
          arguments: { text: `Jane keeps ${marker} in the pantry`, owner_id: owner },
        });
        expect(added.isError).toBeFalsy();
        const found = await client.callTool({
          name: 'search_memories',
          arguments: { query: `where is the ${marker}?`, owner_id: owner },
        });
        expect(textOf(found)).toContain(marker);
        const missing = await client.callTool({
          name: 'get_memory',
          arguments: { memory_id: `no-such-${marker}` },
        });
        expect(missing.isError).toBe(true);
        await client.close();
      } finally {
        await server.close();
      }

      const completions = lines.filter((line) => line.msg === 'request completed');
      const tools = completions.flatMap((line) => (line.mcp_tools as string[] | undefined) ?? []);
      expect(tools).toEqual(['add_memory', 'search_memories', 'get_memory']);
      for (const line of completions.filter((l) => l.mcp_tools)) {
        expect(line).toMatchObject({ path: '/mcp', status: 200, duration_ms: expect.any(Number) });
      }
      const everything = JSON.stringify(lines);
      expect(lines.length).toBeGreaterThan(3);
      expect(everything).not.toContain('zebra-marmalade');
      expect(everything).not.toContain('owner-secret');
      expect(everything).not.toContain(t.tenant.apiKey);
    },
    SLOW,
  );

  it(
    'logs an unexpected tool failure by type and stack, not by its message (which may quote the text)',
    async () => {
      // A provider bug whose message quotes its input, as careless errors do.
      const local = createEmbeddingProvider(testConfig().embeddings);
      const quoting: EmbeddingProvider = {
        provider: local.provider,
        model: local.model,
        version: local.version,
        dimension: local.dimension,
        embed: async (texts) =>
          Promise.reject(new TypeError(`cannot embed "${texts.join('", "')}"`)),
      };
      const t = await createTestApp({}, { embeddings: quoting });
      const logger = createLogger('debug', sink);
      const server = await listen(createApp({ ...t.deps, logger }));
      try {
        const { client } = await connect(`${server.baseUrl}/mcp`, t.tenant.apiKey);
        const failed = await client.callTool({
          name: 'add_memory',
          arguments: { text: 'Omar hides the quince-lantern-8812 in the attic' },
        });
        expect(failed.isError).toBe(true);
        expect(textOf(failed)).toBe('INTERNAL: Internal server error');
        await client.close();
      } finally {
        await server.close();
        await t.mcpSessions.closeAll();
        await t.close();
      }
      const failure = lines.find((line) => line.msg === 'MCP tool failed');
      expect(failure).toMatchObject({
        tool: 'add_memory',
        request_id: expect.any(String),
        err: { type: 'TypeError', stack: expect.stringContaining('at ') },
      });
      expect(JSON.stringify(lines)).not.toContain('quince-lantern');
    },
    SLOW,
  );
});

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { INPUT_BOUNDS } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { connect, listen, textOf, type Connected, type Listening } from '../mcp/support.js';

const { maxKeys, maxBytes } = INPUT_BOUNDS.filterMetadata;

/** A metadata filter of `n` entries. */
const filterOf = (n: number, value: (i: number) => string | number = (i) => i) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value(i)]));

describeDb('metadata filter bounds', () => {
  let t: TestApp;
  let http: Listening;
  let mcp: Connected;
  beforeAll(async () => {
    t = await createTestApp();
    http = await listen(t.app);
    mcp = await connect(`${http.baseUrl}/mcp`, t.tenant.apiKey);
    await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({
        text: 'The filter bound memory',
        owner_id: 'f',
        owner_type: 'user',
        metadata: { k0: 0 },
      })
      .expect(200);
  });
  afterAll(async () => {
    await mcp?.client.close();
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  const body = (metadata: Record<string, unknown>) => ({
    query: 'filter bound',
    owner_id: 'f',
    owner_type: 'user',
    filters: { metadata },
  });

  // 32,768 entries passed PostgreSQL's parameter limit (a 500); 20,000 held the event loop ~5 s.
  for (const path of ['/v1/search', '/v1/context']) {
    it(`${path}: a filter over ${maxKeys} entries or ${maxBytes} bytes is a 400 naming the field`, async () => {
      for (const metadata of [
        filterOf(32_768),
        filterOf(maxKeys + 1),
        filterOf(8, () => 'x'.repeat(maxBytes)),
      ]) {
        const started = Date.now();
        const res = await request(t.app)
          .post(path)
          .set('x-api-key', t.tenant.apiKey)
          .send(body(metadata));
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('BAD_REQUEST');
        expect(JSON.stringify(res.body.error.details)).toMatch(/filters\.metadata.*at most/);
        expect(Date.now() - started).toBeLessThan(1_000);
      }
    });

    it(`${path}: a filter of ${maxKeys} entries is served`, async () => {
      const res = await request(t.app)
        .post(path)
        .set('x-api-key', t.tenant.apiKey)
        .send({
          ...body(filterOf(maxKeys)),
          filters: { metadata: filterOf(maxKeys), filter_mode: 'or' },
        });
      expect(res.status).toBe(200);
    });
  }

  it('MCP search_memories refuses an oversized filter as BAD_REQUEST', async () => {
    const result = (await mcp.client.callTool({
      name: 'search_memories',
      arguments: body(filterOf(32_768)),
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^BAD_REQUEST: /);
    expect(textOf(result)).toContain('at most');
  });
});

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect, listen, type Connected, type Listening } from '../mcp/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

interface Hit {
  memory_id: string;
  text: string;
  score: number;
}

/**
 * A query that names a period ("in October", "July 2022") prefers a memory dated within it over
 * an equally worded one from another time, over HTTP and MCP; without a period the newer one
 * ranks first (freshness), so the order is the window's doing.
 */
describeDb('search: dates in the question', () => {
  let t: TestApp;
  let http: Listening;
  let mcp: Connected;
  const ids: Record<string, string> = {};

  const write = async (text: string, effective_at: string) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'omar', text, effective_at, extract: false });
    expect(res.status).toBe(200);
    return (res.body as { memory_id: string }).memory_id;
  };
  const search = async (query: string) => {
    const res = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'omar', query });
    expect(res.status).toBe(200);
    return res.body.results as Hit[];
  };

  beforeAll(async () => {
    t = await createTestApp();
    http = await listen(t.app);
    mcp = await connect(`${http.baseUrl}/mcp`, t.tenant.apiKey);
    // The latest memory (January 2026) is what "in October" counts back from: October 2025.
    ids.october = await write(
      'Omar cooked a lentil stew for the neighbours',
      '2025-10-12T18:00:00Z',
    );
    ids.january = await write(
      'Omar cooked a pumpkin soup for the neighbours',
      '2026-01-20T18:00:00Z',
    );
    ids.july = await write('Omar cooked a bean chili for the neighbours', '2022-07-09T18:00:00Z');
  }, 120_000);
  afterAll(async () => {
    await mcp?.client.close();
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  it('without a period, the newest of equal matches ranks first', async () => {
    const results = await search('What did Omar cook for the neighbours?');
    expect(results[0]?.memory_id).toBe(ids.january);
  });

  it('a month alone prefers the memory of the latest such month', async () => {
    const results = await search('What did Omar cook for the neighbours in October?');
    expect(results[0]?.memory_id).toBe(ids.october);
  });

  it('a month and year prefers the memory of that month', async () => {
    const results = await search('What did Omar cook for the neighbours in July 2022?');
    expect(results[0]?.memory_id).toBe(ids.july);
  });

  it('search_memories over MCP prefers the dated memory too', async () => {
    const result = (await mcp.client.callTool({
      name: 'search_memories',
      arguments: { user_id: 'omar', query: 'What did Omar cook for the neighbours in October?' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const { results } = result.structuredContent as { results: Hit[] };
    expect(results[0]?.memory_id).toBe(ids.october);
  });
});

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
  related?: Array<{ memory_id: string; text: string }>;
}

/**
 * What a search returns per fact and what a context call puts in the prompt: a memory and the
 * memories extracted from it come back once, context packs to a token budget, and a memory that
 * matches by meaning alone is found in the default hybrid mode, over HTTP and MCP.
 */
describeDb('search: one hit per fact, context to a budget, meaning-only matches', () => {
  let t: TestApp;
  let http: Listening;
  let mcp: Connected;
  let parentId: string;
  let childIds: string[];
  const ids: Record<string, string> = {};

  const write = async (user_id: string, text: string, extract: boolean) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id, text, extract });
    expect(res.status).toBe(200);
    return res.body as { memory_id: string; children?: Array<{ memory_id: string }> };
  };
  const search = async (body: Record<string, unknown>) => {
    const res = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send(body);
    expect(res.status).toBe(200);
    return res.body.results as Hit[];
  };
  const context = async (body: Record<string, unknown>) => {
    const res = await request(t.app)
      .post('/v1/context')
      .set('x-api-key', t.tenant.apiKey)
      .send(body);
    return res;
  };
  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    return result.structuredContent as { results?: Hit[]; citations?: unknown[] };
  };

  beforeAll(async () => {
    t = await createTestApp();
    http = await listen(t.app);
    mcp = await connect(`${http.baseUrl}/mcp`, t.tenant.apiKey);
    const jane = await write('jane', 'Jane moved to Berlin. Reach her at jane@example.com', true);
    parentId = jane.memory_id;
    const list = await request(t.app)
      .get('/v1/memories')
      .query({ user_id: 'jane' })
      .set('x-api-key', t.tenant.apiKey);
    expect(list.status).toBe(200);
    childIds = (list.body.results as Array<{ id: string }>)
      .map((memory) => memory.id)
      .filter((id) => id !== parentId);
    for (const [name, text] of [
      ['cello', 'Lena plays the cello in a community orchestra'],
      ['garden', 'Lena repaired the garden fence on Saturday'],
      ['train', 'Lena takes the early train to the office'],
    ] as const)
      ids[name] = (await write('lena', text, false)).memory_id;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        write('pack', `Note ${i}: the pack holds item number ${i} of the trip list`, false),
      ),
    );
  }, 180_000);
  afterAll(async () => {
    await mcp?.client.close();
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  it('extraction made children to collapse', () => {
    expect(childIds.length).toBeGreaterThanOrEqual(1);
  });

  it('returns a parent and its extracted children as one hit, the others as related', async () => {
    for (const query of ['Where does Jane live?', 'Jane email Berlin']) {
      const results = await search({ user_id: 'jane', query });
      expect(results).toHaveLength(1);
      const members = [
        results[0]!.memory_id,
        ...(results[0]!.related ?? []).map((r) => r.memory_id),
      ];
      expect(new Set(members).size).toBe(members.length);
      for (const id of members) expect([parentId, ...childIds]).toContain(id);
    }
  });

  it('search_memories over MCP returns one hit for the fact too', async () => {
    const { results } = await tool('search_memories', {
      user_id: 'jane',
      query: 'Jane email Berlin',
    });
    expect(results).toHaveLength(1);
  });

  it('context puts the fact in the prompt once', async () => {
    const res = await context({ user_id: 'jane', query: 'Jane email Berlin' });
    expect(res.status).toBe(200);
    expect(res.body.citations).toHaveLength(1);
    expect(res.body.context_text.match(/Berlin/g)).toHaveLength(1);
    const viaMcp = await tool('get_context', { user_id: 'jane', query: 'Jane email Berlin' });
    expect(viaMcp.citations).toHaveLength(1);
  });

  it('packs context into a token budget, most relevant first', async () => {
    const full = await context({ user_id: 'pack', query: 'trip list item' });
    expect(full.status).toBe(200);
    expect(full.body.citations).toHaveLength(10);
    const small = await context({ user_id: 'pack', query: 'trip list item', max_tokens: 60 });
    expect(small.status).toBe(200);
    expect(small.body.context_text.length).toBeLessThanOrEqual(60 * 4);
    expect(small.body.citations.length).toBeGreaterThanOrEqual(1);
    expect(small.body.citations.length).toBeLessThan(10);
    expect(small.body.citations[0].memory_id).toBe(full.body.citations[0].memory_id);
    // Without a page size the budget decides: all twelve notes fit in a large one.
    const large = await context({ user_id: 'pack', query: 'trip list item', max_tokens: 4000 });
    expect(large.body.citations).toHaveLength(12);
    const viaMcp = await tool('get_context', {
      user_id: 'pack',
      query: 'trip list item',
      max_tokens: 60,
    });
    expect(viaMcp.citations).toHaveLength(small.body.citations.length);
  });

  it.each(['musical instrument', 'music hobby'])(
    'finds a meaning-only match in the default hybrid mode: %s',
    async (query) => {
      const results = await search({ user_id: 'lena', query });
      expect(results[0]?.memory_id).toBe(ids.cello);
      const { results: viaMcp } = await tool('search_memories', { user_id: 'lena', query });
      expect(viaMcp?.[0]?.memory_id).toBe(ids.cello);
    },
  );

  it('episode context lifts no unrelated memory above its documented ceiling', async () => {
    // The three memories of Lena were written within minutes: one episode. "orchestra" matches
    // the cello only; its neighbours share no word with it and stay below 0.45.
    const results = await search({ user_id: 'lena', query: 'orchestra' });
    expect(results[0]?.memory_id).toBe(ids.cello);
    for (const hit of results.slice(1)) expect(hit.score).toBeLessThan(0.45);
    const strict = await search({ user_id: 'lena', query: 'orchestra', min_score: 0.5 });
    expect(strict.map((hit) => hit.memory_id)).toEqual([ids.cello]);
  });

  it('refuses a budget outside its bounds with the error envelope', async () => {
    const res = await context({ user_id: 'pack', query: 'trip', max_tokens: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error?.code ?? res.body.code).toBeDefined();
  });
});

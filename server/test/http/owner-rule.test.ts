import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { connect, listen, type Connected, type Listening } from '../mcp/support.js';

/**
 * One owner rule (docs/api-guide.md, Owners): no owner id is the workspace's default owner, for
 * writes, searches and lists alike; listing every owner is asked for with all_owners=true.
 */
describeDb('the owner rule: no owner id is the default owner, lists included', () => {
  let t: TestApp;
  let http: Listening;
  let mcp: Connected;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTestApp();
    http = await listen(t.app);
    mcp = await connect(`${http.baseUrl}/mcp`, t.tenant.apiKey);
    const write = async (name: string, body: Record<string, unknown>) => {
      const res = await request(t.app)
        .post('/v1/memories')
        .set('x-api-key', t.tenant.apiKey)
        .send({ extract: false, ...body });
      expect(res.status).toBe(200);
      ids[name] = res.body.memory_id as string;
    };
    await write('app', { text: 'The help desk opens at nine in the morning' });
    await write('jane', { text: 'Jane opens the shop at nine in the morning', user_id: 'jane' });
    await write('team', {
      text: 'The growth team meets at nine in the morning',
      owner_id: 'growth',
      owner_type: 'team',
    });
  }, 120_000);
  afterAll(async () => {
    await mcp?.client.close();
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  const list = (query: Record<string, string>) =>
    request(t.app).get('/v1/memories').query(query).set('x-api-key', t.tenant.apiKey);
  const listed = (res: request.Response) =>
    (res.body.results as { id: string }[]).map((memory) => memory.id).sort();

  it('a list without an owner id is the default owner, as a search without one is', async () => {
    const res = await list({});
    expect(res.status).toBe(200);
    expect(listed(res)).toEqual([ids.app]);
    expect(res.body.results[0]).toMatchObject({ owner_id: 'default', owner_type: 'app' });

    const search = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ query: 'at nine in the morning', search_mode: 'keyword' });
    expect(search.status).toBe(200);
    expect(search.body.results.map((hit: { memory_id: string }) => hit.memory_id)).toEqual([
      ids.app,
    ]);
  });

  it('an owner id lists that owner; all_owners=true lists every owner, owner_type still filtering', async () => {
    expect(listed(await list({ user_id: 'jane' }))).toEqual([ids.jane]);
    expect(listed(await list({ owner_id: 'growth', owner_type: 'team' }))).toEqual([ids.team]);
    expect(listed(await list({ all_owners: 'true' }))).toEqual(
      [ids.app, ids.jane, ids.team].sort(),
    );
    expect(listed(await list({ all_owners: '1', owner_type: 'team' }))).toEqual([ids.team]);
    expect(listed(await list({ all_owners: 'false' }))).toEqual([ids.app]);
  });

  it('all_owners with an owner id, or a value not a boolean, is a 400', async () => {
    const both = await list({ all_owners: 'true', user_id: 'jane' });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('BAD_REQUEST');
    expect(both.body.error.details.all_owners).toEqual([
      'all_owners lists every owner: give it without user_id, owner_id or entity_id',
    ]);
    expect((await list({ all_owners: 'yes' })).status).toBe(400);
  });

  it('MCP list_memories follows the rule and does not offer all_owners', async () => {
    const plain = await mcp.client.callTool({ name: 'list_memories', arguments: {} });
    const structured = plain.structuredContent as { results: { id: string }[] };
    expect(structured.results.map((memory) => memory.id)).toEqual([ids.app]);
    const jane = await mcp.client.callTool({
      name: 'list_memories',
      arguments: { owner_id: 'jane' },
    });
    expect((jane.structuredContent as typeof structured).results.map((m) => m.id)).toEqual([
      ids.jane,
    ]);
    const refused = await mcp.client.callTool({
      name: 'list_memories',
      arguments: { all_owners: 'true' },
    });
    expect(refused.isError).toBe(true);
    const { tools } = await mcp.client.listTools();
    const schema = tools.find((tool) => tool.name === 'list_memories')?.inputSchema;
    expect(Object.keys(schema?.properties ?? {})).not.toContain('all_owners');
  });
});

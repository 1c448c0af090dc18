import request from 'supertest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { connect, listen, type Listening } from '../mcp/support.js';

interface Result {
  memory_id: string;
  text: string;
  score: number;
}

const DAY = 86_400_000;
const at = (days: number) => new Date(Date.UTC(2024, 4, 10) + days * DAY).toISOString();

/**
 * A reply holds none of the question's words ("How did you two meet?" → "At a pottery class…"):
 * it is found through the turn it answers, indexed with it as its context.
 */
describeDb('the turn a reply answers, in keyword search', () => {
  let t: TestApp;
  let http: Listening;
  const ids: Record<string, string> = {};

  const write = async (name: string, body: object) => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ extract: false, ...body });
    expect(res.status).toBe(200);
    ids[name] = res.body.memory_id;
  };
  const search = async (query: string, body: object = {}) => {
    const res = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'ana', query, search_mode: 'keyword', top_k: 10, ...body });
    expect(res.status).toBe(200);
    return res.body.results as Result[];
  };

  beforeAll(async () => {
    t = await createTestApp();
    http = await listen(t.app);
    await write('question', {
      user_id: 'ana',
      text: 'Ben said, "How did you two meet?"',
      effective_at: at(0),
      metadata: { session: 1 },
    });
    // Another owner's write in between is never the turn Ana's reply answers.
    await write('zed', {
      user_id: 'zed',
      text: 'Zed said, "I like violins."',
      effective_at: at(0),
    });
    await write('reply', {
      user_id: 'ana',
      text: 'Ana said, "At a pottery class in 2019, we shared a wheel."',
      effective_at: at(0),
      metadata: { session: 1 },
    });
    // Written next in the same session, but dated two days later: another episode, so the reply
    // is not its context.
    await write('later', {
      user_id: 'ana',
      text: 'Ana said, "Biscuit chewed my slippers."',
      effective_at: at(2),
      metadata: { session: 1 },
    });
    // Two facts written one after another, of no conversation: neither answers the other.
    await write('nurse', { user_id: 'ana', text: 'Ana works as a nurse.', effective_at: at(2) });
    await write('oslo', { user_id: 'ana', text: 'Ana lives in Oslo.', effective_at: at(2) });
  });
  afterAll(async () => {
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  it('finds a reply through the question it answers, ranked below the question', async () => {
    const results = await search('How did Ana and Ben first meet?');
    const order = results.map((r) => r.memory_id);
    expect(order.slice(0, 2)).toEqual([ids.question, ids.reply]);
    // The context finds the reply; the reply's own text is what comes back.
    expect(results[1]!.text).toBe('Ana said, "At a pottery class in 2019, we shared a wheel."');
    expect(results[1]!.score).toBeLessThan(results[0]!.score);
  });

  it('keeps its own words first: a reply matched by them outranks one matched by context', async () => {
    const results = await search('pottery class');
    expect(results.map((r) => r.memory_id)).toEqual([ids.reply]);
  });

  it('takes context only from the same owner, conversation and episode', async () => {
    // Zed's turn was written just before the reply, but is another owner's.
    expect(await search('violins')).toEqual([]);
    // Biscuit's turn was written after the reply, but days later: it answers nothing.
    expect((await search('pottery')).map((r) => r.memory_id)).toEqual([ids.reply]);
    // Facts written in a row without a conversation in their metadata answer nothing either.
    expect((await search('nurse')).map((r) => r.memory_id)).toEqual([ids.nurse]);
  });

  it('finds a reply through its question in a conversation import (one batched write)', async () => {
    const res = await request(t.app)
      .post('/v1/ingest')
      .set('x-api-key', t.tenant.apiKey)
      .send({
        type: 'conversation',
        user_id: 'cleo',
        group_by: 'message',
        extract: false,
        messages: [
          { role: 'user', content: 'Which trail did you hike last weekend?' },
          { role: 'assistant', content: 'The ridge path above the lake, about twelve kilometres.' },
          { role: 'user', content: 'Biscuit needs new slippers to chew.' },
        ],
      });
    expect(res.status).toBe(200);
    const [, reply, next] = res.body.turns.map((turn: { memory_id: string }) => turn.memory_id);
    const results = await search('which trail last weekend', { user_id: 'cleo' });
    expect(results.map((r) => r.memory_id)).toContain(reply);
    // The reply is the context of the turn after it, not the question.
    expect(results.map((r) => r.memory_id)).not.toContain(next);
  });

  it('finds the reply over MCP search_memories too', async () => {
    const { client } = await connect(`${http.baseUrl}/mcp`, t.tenant.apiKey);
    try {
      const result = (await client.callTool({
        name: 'search_memories',
        arguments: { query: 'How did you two meet?', user_id: 'ana', search_mode: 'keyword' },
      })) as CallToolResult;
      const found = (result.structuredContent as { results: Result[] }).results;
      expect(found.map((r) => r.memory_id)).toContain(ids.reply);
    } finally {
      await client.close();
    }
  });
});

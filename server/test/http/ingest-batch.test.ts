import request from 'supertest';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it, vi, type MockInstance } from 'vitest';
import type { ConversationIngestPayload } from '@mnemo/contract';
import { conversationItems } from '../../src/services/ingest/conversation.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

type Row = Record<string, unknown>;
type BatchCheck = { before: () => void; after: () => void };

describeDb('batched ingest', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const post = (path: string, body: unknown, tenant: TestTenant) =>
    request(t.app)
      .post(path)
      .set('x-api-key', tenant.apiKey)
      .send(body as object);
  const rows = async (query: ReturnType<typeof sql>): Promise<Row[]> => {
    const result = (await t.database.db.execute(query)) as unknown;
    return Array.isArray(result) ? (result as Row[]) : (result as { rows: Row[] }).rows;
  };

  it('writes a conversation in one batch: rows, dedupe inside the batch, events, audit, replay', async () => {
    const tenant = await t.addTenant('batch-http');
    const topics = Array.from(
      { length: 30 },
      (_, i) => `Fact ${i}: my locker ${i} holds item ${i * 7}.`,
    );
    // Items 30..32 repeat items 3, 4 and 5 word for word.
    const contents = [...topics, topics[3]!, topics[4]!, topics[5]!];
    const body = {
      type: 'conversation',
      user_id: 'batch-owner',
      group_by: 'message',
      extract: false,
      idempotency_key: 'batch-http-key-01',
      messages: contents.map((content) => ({ role: 'user', content })),
    };
    const embed = vi.spyOn(t.deps.embeddings, 'embed');
    const res = await post('/v1/ingest', body, tenant);
    // Every item's chunks in one embedder call.
    expect(embed).toHaveBeenCalledTimes(1);
    embed.mockRestore();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ complete: true, stored: 30, deduped: 3, replayed: 0 });
    const turns = res.body.turns as Array<{ status: string; memory_id: string }>;
    expect(turns.slice(30).map((turn) => turn.status)).toEqual(['deduped', 'deduped', 'deduped']);
    expect(turns.slice(30).map((turn) => turn.memory_id)).toEqual(
      turns.slice(3, 6).map((turn) => turn.memory_id),
    );

    const ws = tenant.workspaceId;
    const [counts] = await rows(sql`select
      (select count(*) from memories where workspace_id = ${ws})::int as memories,
      (select count(*) from memory_chunks where workspace_id = ${ws})::int as chunks,
      (select count(*) from domain_events where workspace_id = ${ws} and kind = 'created')::int as created,
      (select count(*) from domain_events where workspace_id = ${ws} and kind = 'deduped' and rule = 'exact')::int as deduped,
      (select count(*) from idempotency_records where workspace_id = ${ws})::int as keys`);
    expect(counts).toEqual({ memories: 30, chunks: 30, created: 30, deduped: 3, keys: 33 });
    // One transaction: the memories keep the items' order, a microsecond apart.
    const order = await rows(sql`select text from memories where workspace_id = ${ws}
      order by created_at, id`);
    expect(order.map((row) => row.text)).toEqual(topics.map((topic) => `user: ${topic}`));
    await t.deps.audit.drain();
    const [audits] = await rows(sql`select count(*)::int as n from audit_log
      where request_id = ${String(res.headers['x-request-id'])}`);
    expect(audits!.n).toBe(33);

    const again = await post('/v1/ingest', body, tenant);
    expect(again.body).toMatchObject({ complete: true, replayed: 33, stored: 0, deduped: 0 });
    expect(again.body.turns.map((turn: { memory_id: string }) => turn.memory_id)).toEqual(
      turns.map((turn) => turn.memory_id),
    );
    const [after] = await rows(
      sql`select count(*)::int as n from memories where workspace_id = ${ws}`,
    );
    expect(after!.n).toBe(30);
  });

  it('stores what writing the items one by one stores, with the same answers', async () => {
    const owner = 'equal-owner';
    // Already stored before the batch, in both workspaces.
    const before = ['I live in Rome.', 'I have a golden retriever.'];
    const payload: ConversationIngestPayload = {
      user_id: owner,
      group_by: 'message',
      idempotency_key: 'batch-equal-key-01',
      messages: [
        'I am allergic to peanuts.',
        'I live in Rome.',
        'I have two children.',
        'I am allergic to peanuts.',
        'I live in Milan.',
        'My phone number is 555-1234.',
        'I have a golden retriever named Max who loves swimming in the lake.',
        'My phone number is 555-1234!',
        'I work as a nurse at the city hospital. I work night shifts twice a week. My manager is called Dana.',
        'My favourite colour is blue.',
        'My favourite colour is green.',
        'I have two children.',
        'Peanuts make me ill, I am allergic.',
        'I play chess on Wednesdays with my neighbour.',
        'On Wednesdays I play chess with my neighbour.',
        'I keep my bike in the shed behind the house.',
        'Behind the house, in the shed, I keep my bike.',
      ].map((content) => ({ role: 'user' as const, content })),
    };
    const { batched } = await bothWays('batch-equal', before, payload);
    // The scenario reaches every lifecycle rule the batch must keep.
    for (const kind of [
      'created:write',
      'deduped:exact',
      'deduped:semantic',
      'replaced:conflict',
      'merged:evolution',
      'extracted:extractor:local',
    ])
      expect(batched.kinds, kind).toContain(kind);
    expect(batched.statuses).toContain('deduped');
  });

  it('supersedes inside the batch, stored memories and earlier turns, as one-by-one writes do', async () => {
    const before = ['I live in Rome.', 'I have a golden retriever.'];
    const payload: ConversationIngestPayload = {
      user_id: 'supersede-owner',
      group_by: 'message',
      extract: false,
      idempotency_key: 'batch-supersede-key-01',
      messages: [
        // Supersedes a stored memory.
        { role: 'user', content: 'I live in Milan.' },
        { role: 'user', content: 'My favourite colour is blue.' },
        // Supersedes the turn before it, which is then not the turn it answers.
        { role: 'user', content: 'My favourite colour is green.' },
        // Supersedes a turn that superseded a stored memory.
        { role: 'user', content: 'I live in Berlin.' },
        // Older than the green turn: kept as its history.
        {
          role: 'user',
          content: 'My favourite colour is yellow.',
          timestamp: '2021-03-01T10:00:00Z',
        },
        { role: 'user', content: 'My car is red.' },
        { role: 'user', content: 'My car is blue.' },
        // The text of a turn superseded: no duplicate of it; it supersedes the green turn.
        { role: 'user', content: 'My favourite colour is blue.' },
        // Repeats a live turn.
        { role: 'user', content: 'My car is blue.' },
      ],
    };
    const { batched } = await bothWays('batch-supersede', before, payload, embeddedOnce());
    for (const kind of ['replaced:conflict', 'replaced:conflict_older'])
      expect(batched.kinds, kind).toContain(kind);
    expect(batched.statuses).toEqual([...Array<string>(8).fill('stored'), 'deduped']);
    const live = (batched.state.memories as Row[]).filter((m) => m.lifecycle_state === 'active');
    expect(live.map((m) => m.text).sort()).toEqual(
      [
        'user: I have a golden retriever.',
        'user: I live in Berlin.',
        'user: My car is blue.',
        'user: My favourite colour is blue.',
      ].sort(),
    );
  });

  it('merges inside the batch, into stored memories and earlier turns, as one-by-one writes do', async () => {
    const before = ['I have a golden retriever.', 'I live in Rome.'];
    const payload: ConversationIngestPayload = {
      user_id: 'merge-owner',
      group_by: 'message',
      extract: false,
      idempotency_key: 'batch-merge-key-01',
      messages: [
        // Refines a stored memory.
        'I have a golden retriever named Max who loves swimming in the lake.',
        'I keep a small garden.',
        // Refines the turn before it.
        'I keep a small garden with tomatoes, roses and a lemon tree behind my house.',
        // Answers the garden turn, as the merge left it.
        'My car is red.',
        // Refines the stored memory again.
        'I have a golden retriever named Max who loves swimming in the lake and chasing ducks in the park.',
        'I live in Milan.',
      ].map((content) => ({ role: 'user' as const, content })),
    };
    const { batched } = await bothWays('batch-merge', before, payload, embeddedOnce());
    const merged = (batched.state.events as Row[]).filter((event) => event.kind === 'merged');
    expect(merged.map((event) => event.memory)).toEqual([
      'user: I have a golden retriever named Max who loves swimming in the lake and chasing ducks in the park.#false',
      'user: I keep a small garden with tomatoes, roses and a lemon tree behind my house.#false',
      'user: I have a golden retriever named Max who loves swimming in the lake and chasing ducks in the park.#false',
    ]);
    const car = (batched.state.chunks as Row[]).find(
      (chunk) => chunk.text === 'user: My car is red.',
    );
    expect(car?.context_text).toContain('lemon tree');
  });

  it('stores each text once when two batches with the same texts race', async () => {
    const tenant = await t.addTenant('batch-race');
    const body = {
      type: 'conversation',
      user_id: 'race-owner',
      group_by: 'message',
      extract: false,
      messages: Array.from({ length: 10 }, (_, i) => ({
        role: 'user',
        content: `Race fact ${i}: shelf ${i} holds box ${i * 3}.`,
      })),
    };
    const answers = await Promise.all([0, 1].map(() => post('/v1/ingest', body, tenant)));
    for (const answer of answers) expect(answer.status).toBe(200);
    const total = (key: 'stored' | 'deduped') =>
      answers.reduce((sum, answer) => sum + (answer.body[key] as number), 0);
    expect(total('stored')).toBe(10);
    expect(total('deduped')).toBe(10);
    const [a, b] = answers.map((answer) =>
      answer.body.turns.map((turn: { memory_id: string }) => turn.memory_id),
    );
    expect(a).toEqual(b);
    const [row] = await rows(
      sql`select count(*)::int as n from memories where workspace_id = ${tenant.workspaceId}`,
    );
    expect(row!.n).toBe(10);
  });

  /**
   * Checks that the conversation is embedded in one call: no item left the batch to be written
   * alone (that write would embed its text again).
   */
  function embeddedOnce(): BatchCheck {
    let embed: MockInstance | undefined;
    return {
      before: () => {
        embed = vi.spyOn(t.deps.embeddings, 'embed');
      },
      after: () => {
        const calls = embed?.mock.calls.length;
        embed?.mockRestore();
        expect(calls).toBe(1);
      },
    };
  }

  /**
   * Writes `before` one by one into two new workspaces, then `payload` into one as one
   * conversation and into the other item by item through `POST /v1/memories`; checks that the
   * answers and what is stored are the same. `check` runs around the conversation's request.
   */
  async function bothWays(
    name: string,
    before: string[],
    payload: ConversationIngestPayload,
    check: BatchCheck = { before: () => undefined, after: () => undefined },
  ) {
    const batchedTenant = await t.addTenant(`${name}-a`);
    const singleTenant = await t.addTenant(`${name}-b`);
    for (const tenant of [batchedTenant, singleTenant]) {
      for (const text of before) {
        const res = await post(
          '/v1/memories',
          { user_id: payload.user_id, text: `user: ${text}` },
          tenant,
        );
        expect(res.status).toBe(200);
      }
    }
    check.before();
    const res = await post('/v1/ingest', { type: 'conversation', ...payload }, batchedTenant);
    check.after();
    expect(res.status).toBe(200);
    const statuses = res.body.turns.map((turn: { status: string }) => turn.status);
    const single: string[] = [];
    for (const item of conversationItems(payload).items) {
      const one = await post('/v1/memories', item.payload, singleTenant);
      expect(one.status).toBe(200);
      single.push(one.body.deduped ? 'deduped' : 'stored');
    }
    expect(statuses).toEqual(single);
    const [a, b] = await Promise.all([state(batchedTenant), state(singleTenant)]);
    expect(a).toEqual(b);
    const kinds = new Set((a.events as Row[]).map((event) => `${event.kind}:${event.rule}`));
    return { batched: { statuses: statuses as string[], state: a, kinds } };
  }

  /** The workspace's memories, chunks, events and keys, ids replaced by labels from the text. */
  async function state(tenant: TestTenant): Promise<Row> {
    const ws = tenant.workspaceId;
    const memories = await rows(sql`select id, text, metadata, memory_type, importance,
      chunk_profile, lifecycle_state, confidence, volatility, content_hash, claims, claim_keys,
      pinned, source_weight, priority_score, effective_at, (expires_at is null) as no_expiry,
      idempotency_key, parent_memory_id, replaced_by_memory_id
      from memories where workspace_id = ${ws} order by created_at, text`);
    // A text stored twice (superseded, then stated again) gets a label per occurrence.
    const label = new Map<string, string>();
    const seen = new Map<string, number>();
    for (const m of memories) {
      const base = `${String(m.text)}#${String(m.parent_memory_id !== null)}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      label.set(String(m.id), n === 0 ? base : `${base}#${n}`);
    }
    const named = (id: unknown) =>
      id === null || id === undefined ? null : (label.get(String(id)) ?? 'unknown');
    const chunks = await rows(sql`select memory_id, chunk_index, text, context_text,
      embedding::text as embedding, embedding_provider, embedding_dimension from memory_chunks where workspace_id = ${ws}`);
    const events = await rows(sql`select kind, rule, memory_id, related_memory_id, details
      from domain_events where workspace_id = ${ws} order by seq`);
    const keys = await rows(sql`select key, request_hash, response from idempotency_records
      where workspace_id = ${ws} order by key`);
    await t.deps.audit.drain();
    const [audits] = await rows(
      sql`select count(*)::int as n from audit_log where workspace_id = ${ws}`,
    );
    await t.deps.quota.drain?.();
    const usage = await rows(sql`select resource, sum(used)::int as used from usage_counters
      where workspace_id = ${ws} group by resource order by resource`);
    return {
      memories: memories
        .map(({ id, parent_memory_id, replaced_by_memory_id, ...rest }) => ({
          ...rest,
          self: named(id),
          parent: named(parent_memory_id),
          replacedBy: named(replaced_by_memory_id),
        }))
        .sort((x, y) => String(x.self).localeCompare(String(y.self))),
      chunks: chunks
        .map(({ memory_id, ...rest }): Row => ({ ...rest, memory: named(memory_id) }))
        .sort((x, y) =>
          `${x.memory}:${x.chunk_index}`.localeCompare(`${y.memory}:${y.chunk_index}`),
        ),
      events: events.map(({ memory_id, related_memory_id, ...rest }) => ({
        ...rest,
        memory: named(memory_id),
        related: named(related_memory_id),
      })),
      keys: keys.map(({ response, ...rest }) => {
        const { memory_id, superseded_memory_id, ...answer } = response as Row;
        return {
          ...rest,
          answer,
          memory: named(memory_id),
          superseded: named(superseded_memory_id),
        };
      }),
      audits: audits!.n,
      usage,
    };
  }
});

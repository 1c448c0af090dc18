import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/test/support/app.js';
import { describeDb } from '../../server/test/support/db.js';
import {
  AuthenticationError,
  InvalidOwnerIdError,
  MemoryClient,
  NotFoundError,
} from '../src/index.js';

// The client against a real listening server (the app over a fresh PGlite database).
describeDb('MemoryClient end to end', () => {
  let testApp: TestApp;
  let listener: Server;
  let baseUrl: string;
  let client: MemoryClient;

  beforeAll(async () => {
    testApp = await createTestApp(process.env.E2E_DEBUG ? { LOG_LEVEL: 'error' } : {});
    listener = await new Promise<Server>((resolve) => {
      const server = testApp.app.listen(0, '127.0.0.1', () => resolve(server));
    });
    baseUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    client = new MemoryClient({ baseUrl, apiKey: testApp.tenant.apiKey });
  });

  afterAll(async () => {
    await client?.close();
    await new Promise<void>((resolve) => {
      listener?.closeAllConnections();
      listener?.close(() => resolve());
    });
    await testApp?.close();
  });

  it('health', async () => {
    await expect(client.health()).resolves.toMatchObject({ status: 'ok' });
  });

  it('add, search over MCP and over REST, context, feedback, get, list, delete', async () => {
    const added = await client.memories.add({
      text: 'Jane is allergic to peanuts and carries an epipen',
      ownerId: 'jane',
      ownerType: 'user',
      memory_type: 'fact',
      metadata: { source: 'e2e' },
      extract: false,
    });
    expect(added).toMatchObject({ stored: true });
    const other = await client.memories.add({
      text: 'Jane moved to Berlin in March',
      userId: 'jane',
      extract: false,
    });

    // A retry of the same write (same idempotency key) returns the first result.
    const again = await client.memories.add({
      text: 'Jane prefers aisle seats',
      ownerId: 'jane',
      extract: false,
      idempotency_key: 'e2e-write-0001',
    });
    const replay = await client.memories.add({
      text: 'Jane prefers aisle seats',
      ownerId: 'jane',
      extract: false,
      idempotency_key: 'e2e-write-0001',
    });
    expect(replay.memory_id).toBe(again.memory_id);

    // Hybrid: the first simple search does not wait for the MCP handshake.
    const first = await client.search.query({ query: 'peanut allergy', ownerId: 'jane', top_k: 3 });
    expect(client.lastSearchTransport).toBe('rest');
    await client.connect();
    const viaMcp = await client.search.query({
      query: 'peanut allergy',
      ownerId: 'jane',
      top_k: 3,
    });
    expect(client.lastSearchTransport).toBe('mcp');
    expect(viaMcp.results.map((hit) => hit.memory_id)).toEqual(
      first.results.map((hit) => hit.memory_id),
    );
    const viaRest = await client.search.query({
      query: 'peanut allergy',
      ownerId: 'jane',
      top_k: 3,
      search_mode: 'hybrid',
    });
    expect(client.lastSearchTransport).toBe('rest');
    expect(viaMcp.results[0]?.memory_id).toBe(added.memory_id);
    expect(viaRest.results.map((hit) => hit.memory_id)).toEqual(
      viaMcp.results.map((hit) => hit.memory_id),
    );
    // Same shape whichever transport served it.
    expect(Object.keys(viaMcp).sort()).toEqual(Object.keys(viaRest).sort());
    expect(viaMcp.request_id).toEqual(expect.any(String));
    expect(viaRest.request_id).toEqual(expect.any(String));

    const filtered = await client.search.query({
      query: 'Jane',
      ownerId: 'jane',
      filters: { metadata: { source: 'e2e' } },
    });
    expect(filtered.results.map((hit) => hit.memory_id)).toEqual([added.memory_id]);

    const context = await client.context.get({
      query: 'What is Jane allergic to?',
      ownerId: 'jane',
    });
    expect(client.lastSearchTransport).toBe('mcp');
    expect(context.context_text).toContain('peanuts');
    expect(context.citations[0]).toMatchObject({ i: 1, memory_id: added.memory_id });
    const contextRest = await client.context.get({
      query: 'What is Jane allergic to?',
      ownerId: 'jane',
      page: 1,
    });
    expect(client.lastSearchTransport).toBe('rest');
    expect(contextRest.context_text).toBe(context.context_text);

    const feedback = await client.feedback.send({
      feedback: 'positive',
      request_id: viaRest.request_id!,
    });
    expect(feedback).toMatchObject({ feedback: 'positive', request_id: viaRest.request_id });

    await expect(client.memories.get(other.memory_id)).resolves.toMatchObject({ owner_id: 'jane' });
    const list = await client.memories.list({ ownerId: 'jane' });
    expect(list.total).toBe(3);

    await expect(client.memories.delete(added.memory_id)).resolves.toEqual({
      id: added.memory_id,
      deleted: true,
      deleted_children: expect.any(Array),
    });
    await expect(client.memories.get(added.memory_id)).rejects.toBeInstanceOf(NotFoundError);
    const after = await client.search.query({ query: 'peanut allergy', ownerId: 'jane' });
    expect(after.results.map((hit) => hit.memory_id)).not.toContain(added.memory_id);
  });

  it("transport 'mcp' and 'rest' agree on a real server", async () => {
    const mcpOnly = new MemoryClient({ baseUrl, apiKey: testApp.tenant.apiKey, transport: 'mcp' });
    const restOnly = new MemoryClient({
      baseUrl,
      apiKey: testApp.tenant.apiKey,
      transport: 'rest',
    });
    try {
      const a = await mcpOnly.search.query({ query: 'Berlin', ownerId: 'jane', page_size: 5 });
      const b = await restOnly.search.query({ query: 'Berlin', ownerId: 'jane', page_size: 5 });
      expect({ ...a, request_id: '' }).toEqual({ ...b, request_id: '' });
    } finally {
      await mcpOnly.close();
    }
  });

  it('errors: bad key, INVALID_OWNER_ID; usage and billing status are served', async () => {
    const bad = new MemoryClient({
      baseUrl,
      apiKey: 'mnemo_wrongwrongwrongwrongwrongwrong',
      maxRetries: 0,
    });
    await expect(bad.memories.list()).rejects.toBeInstanceOf(AuthenticationError);
    // Over hybrid, MCP refuses the key too and the REST fallback reports it.
    await expect(bad.search.query({ query: 'x' })).rejects.toBeInstanceOf(AuthenticationError);
    await bad.close();
    await expect(
      client.memories.add({ text: 'x', ownerId: 'a', userId: 'b' }),
    ).rejects.toBeInstanceOf(InvalidOwnerIdError);
    await expect(client.usage.today()).resolves.toMatchObject({
      plan: expect.any(String),
      writes: expect.any(Number),
      reads: expect.any(Number),
      embeds: expect.any(Number),
    });
    // Billing is served: without a payment provider it reports the internal grant.
    await expect(client.billing.status()).resolves.toMatchObject({
      effective_plan: expect.any(String),
      plan_status: expect.any(String),
    });
  });
});

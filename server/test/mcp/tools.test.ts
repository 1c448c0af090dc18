import {
  LoggingMessageNotificationSchema,
  McpError,
  type CallToolResult,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditRecords } from '../../src/db/queries/audit.js';
import {
  createEmbeddingProvider,
  type EmbeddingProvider,
} from '../../src/providers/embeddings/index.js';
import { createTestApp, testConfig, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import {
  connect,
  errorEnvelopeOf,
  listen,
  textOf,
  type Connected,
  type Exchange,
  type Listening,
} from './support.js';

const TOOL_NAMES = [
  'add_memory',
  'delete_memory',
  'get_context',
  'get_memory',
  'list_memories',
  'search_memories',
  'send_feedback',
];

type Structured = Record<string, unknown> & { request_id?: string };

describeDb('MCP tools over streamable HTTP', () => {
  let t: TestApp;
  let http: Listening;
  let other: TestTenant;
  let mcpUrl: string;
  const open: Connected[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
    http = await listen(t.app);
    mcpUrl = `${http.baseUrl}/mcp`;
  });
  afterAll(async () => {
    await Promise.all(open.map(({ client }) => client.close()));
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  const session = async (
    apiKey = t.tenant.apiKey,
    options: Parameters<typeof connect>[2] = {},
    url = mcpUrl,
  ) => {
    const connected = await connect(url, apiKey, options);
    open.push(connected);
    return connected;
  };

  const call = async ({ client }: Connected, name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return {
      ...result,
      structured: result.structuredContent as Structured | undefined,
      text: textOf(result),
    };
  };

  it('initializes a session with the server info, instructions and capabilities', async () => {
    const { client, transport } = await session();
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerVersion()).toMatchObject({ name: 'mnemo', version: expect.any(String) });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, logging: {} });
    expect(client.getInstructions()).toContain('search_memories');
    expect(await client.ping()).toEqual({});
    expect(t.mcpSessions.size).toBeGreaterThanOrEqual(1);
  });

  it('lists every tool with a description, an input schema and an output schema', async () => {
    const { client } = await session();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(Object.keys(tool.inputSchema.properties ?? {}).length, tool.name).toBeGreaterThan(0);
      // Every field is described for the model.
      for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect(
          (schema as { description?: string }).description,
          `${tool.name}.${field}`,
        ).toBeTruthy();
      }
      expect(tool.outputSchema?.type).toBe('object');
      // Shared sub-schemas are inlined: no $ref for a client to resolve.
      expect(JSON.stringify(tool.inputSchema)).not.toContain('$ref');
    }
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    // Derived from the contract: its bounds and required fields.
    expect(byName.add_memory?.inputSchema.required).toEqual(['text']);
    expect(byName.add_memory?.inputSchema.properties?.text).toMatchObject({
      type: 'string',
      minLength: 1,
      maxLength: 50_000,
    });
    expect(byName.search_memories?.inputSchema.properties?.top_k).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 20,
    });
    expect(byName.list_memories?.inputSchema.properties?.metadata).toMatchObject({
      type: 'object',
    });
    expect(byName.get_memory?.inputSchema.required).toEqual(['memory_id']);
    expect(byName.delete_memory?.annotations).toMatchObject({
      destructiveHint: true,
      readOnlyHint: false,
    });
    expect(byName.search_memories?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.search_memories?.outputSchema?.required).toEqual(
      expect.arrayContaining(['results', 'request_id']),
    );
  });

  it('runs every tool end to end: add → search → get_context → list → get → send_feedback → delete', async () => {
    const log: Exchange[] = [];
    const mcp = await session(t.tenant.apiKey, { log });

    const first = await call(mcp, 'add_memory', {
      text: 'Jane moved to Berlin in March and works as a nurse at the Charité.',
      user_id: 'jane',
      metadata: { source: 'chat' },
      memory_type: 'fact',
    });
    expect(first.isError).toBeFalsy();
    const janeBerlin = first.structured?.memory_id as string;
    expect(first.structured).toMatchObject({
      memory_id: expect.any(String),
      stored: true,
      chunks: 1,
    });
    expect(first.text).toContain(`Stored memory ${janeBerlin}`);
    const second = await call(mcp, 'add_memory', {
      text: 'Jane prefers tea over coffee.',
      owner_id: 'jane',
      memory_type: 'preference',
    });
    const janeTea = second.structured?.memory_id as string;
    // The same text again is not stored twice.
    const again = await call(mcp, 'add_memory', {
      text: 'Jane prefers tea over coffee.',
      owner_id: 'jane',
    });
    expect(again.structured).toMatchObject({ memory_id: janeTea, deduped: true });
    expect(again.text).toContain('Not stored again');

    const search = await call(mcp, 'search_memories', {
      query: 'Where did Jane move to?',
      user_id: 'jane',
    });
    expect(search.isError).toBeFalsy();
    const results = search.structured?.results as Array<{ memory_id: string; score: number }>;
    expect(results[0]?.memory_id).toBe(janeBerlin);
    expect(search.structured).toMatchObject({
      page: 1,
      page_size: 10,
      total: expect.any(Number),
      has_more: false,
    });
    // The request id is the HTTP request's x-request-id: the key of the learning signal.
    const searchExchange = log.find((exchange) =>
      exchange.rpcMethods.includes('tools/call search_memories'),
    );
    expect(search.structured?.request_id).toBe(searchExchange?.requestId);
    expect(search.text).toMatch(
      /^\d+ matching memories in total; showing 1–\d+:\n1\. \[score 0\.\d{3}\] Jane moved to Berlin/,
    );
    expect(search.text).toContain(`memory_id: ${janeBerlin}`);
    expect(search.text).toContain(`request_id: ${search.structured?.request_id}`);

    const context = await call(mcp, 'get_context', {
      query: 'What does Jane drink?',
      owner_id: 'jane',
    });
    expect(context.structured?.context_text).toContain('[1] Jane prefers tea over coffee.');
    expect(context.structured?.citations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ i: 1, memory_id: janeTea, chunk_index: 0 }),
      ]),
    );
    expect(context.structured?.request_id).toEqual(expect.any(String));
    expect(context.structured?.request_id).not.toBe(search.structured?.request_id);
    expect(context.text).toContain('Relevant memories (most relevant first; cite by number):');
    expect(context.text).toContain(`[1] memory_id ${janeTea}`);

    const list = await call(mcp, 'list_memories', {
      user_id: 'jane',
      metadata: { source: 'chat' },
    });
    expect(list.structured).toMatchObject({ total: 1, page: 1, page_size: 20, has_more: false });
    expect((list.structured?.results as Array<{ id: string }>)[0]?.id).toBe(janeBerlin);
    const all = await call(mcp, 'list_memories', { owner_id: 'jane', page_size: 1 });
    expect(all.structured).toMatchObject({ total: 2, has_more: true });
    expect(all.text).toContain('2 memories in total; showing 1–1:');
    expect(all.text).toContain('More on page 2.');

    const got = await call(mcp, 'get_memory', { memory_id: janeBerlin });
    expect(got.structured).toMatchObject({
      id: janeBerlin,
      owner_id: 'jane',
      owner_type: 'user',
      memory_type: 'fact',
      metadata: { source: 'chat' },
    });
    expect(got.text).toContain('owner: user:jane · type: fact · state: active');

    // Learning signals are stored off the response path.
    await t.deps.background.drain();
    const vote = await call(mcp, 'send_feedback', {
      feedback: 'positive',
      request_id: search.structured?.request_id,
    });
    expect(vote.structured).toEqual({
      request_id: search.structured?.request_id,
      feedback: 'positive',
      applied: results.length,
    });
    expect(vote.text).toMatch(
      /^Recorded positive feedback on request .+: applied to \d+ memor(y|ies)\.$/,
    );
    const contextVote = await call(mcp, 'send_feedback', {
      feedback: 'negative',
      request_id: context.structured?.request_id,
    });
    expect(contextVote.isError).toBeFalsy();

    const deleted = await call(mcp, 'delete_memory', { memory_id: janeTea });
    expect(deleted.structured).toEqual({ id: janeTea, deleted: true, deleted_children: [] });
    const gone = await call(mcp, 'get_memory', { memory_id: janeTea });
    expect(gone.isError).toBe(true);
    expect(gone.text).toBe(`NOT_FOUND: Memory ${janeTea} not found`);
    expect((await call(mcp, 'list_memories', { owner_id: 'jane' })).structured?.total).toBe(1);
  });

  describe('errors', () => {
    it('validates arguments with the full contract schema, refinements included, as BAD_REQUEST', async () => {
      const mcp = await session();
      const aliases = await call(mcp, 'add_memory', { text: 'x', user_id: 'a', owner_id: 'b' });
      expect(aliases.isError).toBe(true);
      expect(aliases.text).toMatch(/^BAD_REQUEST: /);
      expect(aliases.text).toContain('- owner_id: disagrees with user_id');
      const envelope = errorEnvelopeOf(aliases);
      expect(envelope.error).toMatchObject({
        code: 'BAD_REQUEST',
        details: {
          owner_id: ['disagrees with user_id: user_id, owner_id are aliases and must be equal'],
        },
      });
      expect(envelope.request_id).toEqual(expect.any(String));
      // Nothing was stored.
      expect((await call(mcp, 'list_memories', { user_id: 'a' })).structured?.total).toBe(0);

      // Type and bound errors answer the same way (not the SDK's -32602 text).
      const bounds = await call(mcp, 'search_memories', {
        query: 'x',
        top_k: 100,
        filters: { colour: 'red' },
      });
      expect(bounds.text).toMatch(/^BAD_REQUEST: /);
      expect(Object.keys(errorEnvelopeOf(bounds).error.details ?? {}).sort()).toEqual([
        'filters',
        'top_k',
      ]);
      // Unknown arguments are refused, not silently dropped as REST drops unknown body fields.
      const misspelt = await call(mcp, 'add_memory', { text: 'Ana likes chess.', user: 'ana' });
      expect(misspelt.text).toMatch(/^BAD_REQUEST: /);
      expect(errorEnvelopeOf(misspelt).error.details).toEqual({
        arguments: ['unknown field(s): user'],
      });
      const missing = await call(mcp, 'add_memory', { user_id: 'a' });
      expect(errorEnvelopeOf(missing).error.details).toEqual({ text: ['is required'] });
      const badList = await call(mcp, 'list_memories', {
        page_size: 500,
        metadata: { nested: { no: 1 } },
      });
      expect(Object.keys(errorEnvelopeOf(badList).error.details ?? {}).sort()).toEqual([
        'metadata',
        'page_size',
      ]);
    });

    it('answers not found and conflicts as tool errors with the spec code', async () => {
      const mcp = await session();
      const missing = '0b0a3d8e-97a4-4d3f-9a51-0c6fb4cde111';
      for (const [name, args] of [
        ['get_memory', { memory_id: missing }],
        ['delete_memory', { memory_id: 'not-a-uuid' }],
        ['send_feedback', { feedback: 'positive', request_id: 'never-seen' }],
      ] as const) {
        const result = await call(mcp, name, args);
        expect(result.isError, name).toBe(true);
        expect(result.text, name).toMatch(/^NOT_FOUND: /);
        expect(errorEnvelopeOf(result).error.code).toBe('NOT_FOUND');
      }
      await call(mcp, 'add_memory', {
        text: 'Kai likes jazz.',
        user_id: 'kai',
        idempotency_key: 'kai-jazz-0001',
      });
      const replay = await call(mcp, 'add_memory', {
        text: 'Kai likes jazz.',
        user_id: 'kai',
        idempotency_key: 'kai-jazz-0001',
      });
      expect(replay.isError).toBeFalsy();
      const conflict = await call(mcp, 'add_memory', {
        text: 'Kai likes rock.',
        user_id: 'kai',
        idempotency_key: 'kai-jazz-0001',
      });
      expect(conflict.text).toMatch(/^CONFLICT: idempotency_key was already used/);
      expect(errorEnvelopeOf(conflict).error.details).toEqual({
        idempotency_key: ['was already used with a different payload'],
      });
    });

    it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
      const { client } = await session();
      const error = await client
        .callTool({ name: 'drop_database', arguments: {} })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32602);
    });
  });

  it("keeps workspaces apart: B's tools never see A's memories, and B cannot use A's session", async () => {
    const a = await session();
    const added = await call(a, 'add_memory', {
      text: 'Omar keeps his spare key under the blue flowerpot.',
      user_id: 'omar',
    });
    const secret = added.structured?.memory_id as string;
    const aSearch = await call(a, 'search_memories', {
      query: 'spare key flowerpot',
      user_id: 'omar',
    });
    expect((aSearch.structured?.results as unknown[]).length).toBe(1);
    await t.deps.background.drain();

    const b = await session(other.apiKey);
    expect(
      (await call(b, 'search_memories', { query: 'spare key flowerpot', user_id: 'omar' }))
        .structured?.total,
    ).toBe(0);
    expect(
      (await call(b, 'get_context', { query: 'spare key flowerpot', user_id: 'omar' })).structured
        ?.context_text,
    ).toBe('');
    expect((await call(b, 'list_memories', { user_id: 'omar' })).structured?.total).toBe(0);
    expect((await call(b, 'get_memory', { memory_id: secret })).text).toMatch(/^NOT_FOUND/);
    expect((await call(b, 'delete_memory', { memory_id: secret })).text).toMatch(/^NOT_FOUND/);
    expect(
      (
        await call(b, 'send_feedback', {
          feedback: 'negative',
          request_id: aSearch.structured?.request_id,
        })
      ).text,
    ).toMatch(/^NOT_FOUND/);

    // B's key on A's session id: refused exactly like an unknown session.
    const hijack = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${other.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': a.transport.sessionId ?? '',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'get_memory', arguments: { memory_id: secret } },
      }),
    });
    expect(hijack.status).toBe(404);
    expect(await hijack.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Session not found' },
      id: null,
    });
    // A's memory and session are untouched.
    expect((await call(a, 'get_memory', { memory_id: secret })).structured?.id).toBe(secret);
  });

  it('serves /v1/mcp the same way and audits every MCP request with its workspace', async () => {
    const log: Exchange[] = [];
    const mcp = await session(t.tenant.apiKey, { log }, `${http.baseUrl}/v1/mcp`);
    await mcp.client.listTools();
    const added = await call(mcp, 'add_memory', {
      text: 'Lena runs the Thursday book club.',
      user_id: 'lena',
    });
    expect(added.isError).toBeFalsy();
    // Closing the client ends its GET event stream, whose request is audited when it ends.
    await mcp.client.close();
    const exchanges = log.filter((exchange) => exchange.requestId);
    expect(exchanges.map((exchange) => exchange.httpMethod)).toEqual(
      expect.arrayContaining(['POST', 'GET']),
    );
    expect(exchanges.length).toBeGreaterThanOrEqual(5); // initialize, initialized, GET stream, tools/list, tools/call

    let rows: Awaited<ReturnType<typeof listAuditRecords>> = [];
    for (let attempt = 0; attempt < 40; attempt += 1) {
      await t.deps.audit.drain();
      rows = (await listAuditRecords(t.database.db, { workspaceId: t.tenant.workspaceId })).filter(
        (row) => row.path === '/v1/mcp',
      );
      if (exchanges.every((exchange) => rows.some((row) => row.requestId === exchange.requestId)))
        break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const exchange of exchanges) {
      const audited = rows.filter((row) => row.requestId === exchange.requestId);
      // One row per HTTP request, whoever wrote it (the write's transaction, or the completion hook).
      expect(audited, `${exchange.httpMethod} ${exchange.rpcMethods.join(',')}`).toHaveLength(1);
      expect(audited[0]).toMatchObject({
        method: exchange.httpMethod,
        status: exchange.status,
        apiKeyId: expect.any(String),
      });
    }
    const write = exchanges.find((exchange) =>
      exchange.rpcMethods.includes('tools/call add_memory'),
    );
    expect(rows.find((row) => row.requestId === write?.requestId)).toMatchObject({
      status: 200,
      method: 'POST',
    });
  });
});

describeDb('MCP tools: unexpected failures', () => {
  let t: TestApp;
  let http: Listening;
  beforeAll(async () => {
    // A provider bug (not an EmbeddingError): the write fails with something unexpected.
    const local = createEmbeddingProvider(testConfig().embeddings);
    const broken: EmbeddingProvider = {
      provider: local.provider,
      model: local.model,
      version: local.version,
      dimension: local.dimension,
      embed: async () =>
        Promise.reject(new TypeError('secret internals: cannot read x of undefined')),
    };
    t = await createTestApp({}, { embeddings: broken });
    http = await listen(t.app);
  });
  afterAll(async () => {
    await t?.mcpSessions.closeAll();
    await http?.close();
    await t?.close();
  });

  it('answers INTERNAL without leaking the cause, and logs the request id to a client that asked', async () => {
    const log: Exchange[] = [];
    const { client } = await connect(`${http.baseUrl}/mcp`, t.tenant.apiKey, { log });
    const messages: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    });
    expect(await client.setLoggingLevel('warning')).toEqual({});
    const result = (await client.callTool({
      name: 'add_memory',
      arguments: { text: 'This write will fail.' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('INTERNAL: Internal server error');
    expect(JSON.stringify(result)).not.toContain('secret internals');
    const requestId = log.find((exchange) =>
      exchange.rpcMethods.includes('tools/call add_memory'),
    )?.requestId;
    expect(errorEnvelopeOf(result).request_id).toBe(requestId);
    await expect.poll(() => messages.length).toBe(1);
    expect(messages[0]).toEqual({
      level: 'error',
      logger: 'mnemo',
      data: { tool: 'add_memory', request_id: requestId },
    });
    await client.close();
  });
});

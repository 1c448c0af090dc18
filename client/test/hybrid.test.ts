import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  MemoryClient,
  NotFoundError,
  isSimpleSearch,
  type ClientOptions,
  type SearchParams,
} from '../src/index.js';
import {
  BASE_URL,
  contextResponse,
  envelope,
  searchResponse,
  type RpcMessage,
} from './fixtures.js';

const server = setupServer();
/** Every client a test made: closed before the handlers go, so no background handshake outlives its test. */
const made: MemoryClient[] = [];
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(async () => {
  await Promise.all(made.splice(0).map((api) => api.close()));
  server.resetHandlers();
});
afterAll(() => server.close());

const SESSION = 'session-1';

interface McpMock {
  messages: RpcMessage[];
  toolCalls: Array<{ name: string; arguments: Record<string, unknown> }>;
  deleted: Array<string | null>;
  authorization: Array<string | null>;
  tokens: Array<string | null>;
}

/**
 * A minimal streamable-HTTP MCP server: JSON responses (no SSE), one session, tools answered by
 * `tool`. Enough for the SDK client's initialize → initialized → tools/call exchange.
 */
function mcpServer(
  tool: (
    name: string,
    args: Record<string, unknown>,
  ) => Record<string, unknown> | Response | Promise<Response>,
): McpMock {
  const mock: McpMock = {
    messages: [],
    toolCalls: [],
    deleted: [],
    authorization: [],
    tokens: [],
  };
  server.use(
    http.post(`${BASE_URL}/v1/mcp`, async ({ request }) => {
      const message = (await request.json()) as RpcMessage;
      mock.messages.push(message);
      mock.authorization.push(request.headers.get('authorization'));
      mock.tokens.push(request.headers.get('mnemo-consistency-token'));
      const headers = { 'mcp-session-id': SESSION };
      if (message.id === undefined) return new HttpResponse(null, { status: 202, headers });
      if (message.method === 'initialize') {
        return HttpResponse.json(
          {
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: message.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'mock', version: '1' },
            },
          },
          { headers },
        );
      }
      if (message.method === 'tools/call') {
        const name = message.params?.name ?? '';
        const args = message.params?.arguments ?? {};
        mock.toolCalls.push({ name, arguments: args });
        const result = await tool(name, args);
        if (result instanceof Response) return result;
        return HttpResponse.json({ jsonrpc: '2.0', id: message.id, result }, { headers });
      }
      return HttpResponse.json({ jsonrpc: '2.0', id: message.id, result: {} }, { headers });
    }),
    http.get(`${BASE_URL}/v1/mcp`, () => new HttpResponse(null, { status: 405 })),
    http.delete(`${BASE_URL}/v1/mcp`, ({ request }) => {
      mock.deleted.push(request.headers.get('mcp-session-id'));
      return new HttpResponse(null, { status: 200 });
    }),
  );
  return mock;
}

const toolResult = (structured: Record<string, unknown>) => ({
  content: [{ type: 'text', text: 'for the model' }],
  structuredContent: structured,
});

/** REST twins of the tools, counting calls and answering with the same data. */
function restServer() {
  const calls: Array<{ path: string; body: unknown }> = [];
  server.use(
    http.post(`${BASE_URL}/v1/search`, async ({ request }) => {
      calls.push({ path: '/v1/search', body: await request.json() });
      return HttpResponse.json(searchResponse, { headers: { 'x-request-id': 'req-rest' } });
    }),
    http.post(`${BASE_URL}/v1/context`, async ({ request }) => {
      calls.push({ path: '/v1/context', body: await request.json() });
      return HttpResponse.json(contextResponse, { headers: { 'x-request-id': 'req-rest' } });
    }),
  );
  return calls;
}

function standardMcp() {
  return mcpServer((name) =>
    toolResult(
      name === 'get_context'
        ? { ...contextResponse, request_id: 'req-mcp' }
        : { ...searchResponse, request_id: 'req-mcp' },
    ),
  );
}

function client(options: ClientOptions = {}) {
  const api = new MemoryClient({ baseUrl: BASE_URL, apiKey: 'k', retryBaseMs: 1, ...options });
  made.push(api);
  return api;
}

describe('consistency token', () => {
  it('sends the newest token a response carried with every later request, REST and MCP', async () => {
    const seen: Array<string | null> = [];
    const mcp = mcpServer(() => toolResult({ ...searchResponse, request_id: 'req-mcp' }));
    server.use(
      http.post(`${BASE_URL}/v1/memories`, ({ request }) => {
        seen.push(request.headers.get('mnemo-consistency-token'));
        return HttpResponse.json(
          { memory_id: 'm1', deduped: false, chunks: 1 },
          { headers: { 'mnemo-consistency-token': seen.length === 1 ? '0/2000' : '0/1000' } },
        );
      }),
    );
    const api = client({ transport: 'mcp' });
    await api.memories.add({ text: 'first' });
    await api.memories.add({ text: 'second' });
    await api.memories.add({ text: 'third' });
    await api.search.query({ query: 'seat' });
    // None before the first write; an older token never replaces a newer one.
    expect(seen).toEqual([null, '0/2000', '0/2000']);
    expect(mcp.tokens.at(-1)).toBe('0/2000');
  });
});

describe('hybrid routing', () => {
  it('a simple search goes over MCP (search_memories), with the API key and the normalised owner', async () => {
    const mcp = standardMcp();
    const rest = restServer();
    const api = client();
    await api.connect();
    const result = await api.search.query({
      query: 'seat',
      ownerId: 'u_42',
      top_k: 5,
      namespace: 'travel',
    });
    expect(api.lastSearchTransport).toBe('mcp');
    expect(mcp.toolCalls).toEqual([
      {
        name: 'search_memories',
        arguments: { query: 'seat', owner_id: 'u_42', top_k: 5, namespace: 'travel' },
      },
    ]);
    expect(mcp.authorization.every((value) => value === 'Bearer k')).toBe(true);
    expect(rest).toEqual([]);
    expect(result).toEqual({ ...searchResponse, request_id: 'req-mcp' });
    await api.close();
  });

  it('the result has the same shape over MCP and over REST', async () => {
    standardMcp();
    restServer();
    const viaMcp = await client({ transport: 'mcp' }).search.query({ query: 'seat' });
    const viaRest = await client({ transport: 'rest' }).search.query({ query: 'seat' });
    expect(Object.keys(viaMcp).sort()).toEqual(Object.keys(viaRest).sort());
    expect({ ...viaMcp, request_id: 'x' }).toEqual({ ...viaRest, request_id: 'x' });
    const ctxMcp = await client({ transport: 'mcp' }).context.get({ query: 'seat' });
    const ctxRest = await client({ transport: 'rest' }).context.get({ query: 'seat' });
    expect({ ...ctxMcp, request_id: 'x' }).toEqual({ ...ctxRest, request_id: 'x' });
    expect(ctxRest.request_id).toBe('req-rest');
    expect(ctxMcp.request_id).toBe('req-mcp');
  });

  it('the first simple search is served over REST while the session opens in the background', async () => {
    let answerInitialize = () => {};
    const initializeHeld = new Promise<void>((release) => (answerInitialize = release));
    const mcp = mcpServer((name) =>
      toolResult({
        ...(name === 'get_context' ? contextResponse : searchResponse),
        request_id: 'req-mcp',
      }),
    );
    // The handshake cannot finish until the test says so: the search must not wait for it.
    server.use(
      http.post(`${BASE_URL}/v1/mcp`, async ({ request }) => {
        const message = (await request.clone().json()) as RpcMessage;
        if (message.method === 'initialize') await initializeHeld;
        return undefined;
      }),
    );
    const rest = restServer();
    const api = client();
    const first = await api.search.query({ query: 'a' });
    expect(api.lastSearchTransport).toBe('rest');
    expect(first.request_id).toBe('req-rest');
    expect(rest.map((call) => call.path)).toEqual(['/v1/search']);
    expect(mcp.messages).toEqual([]);
    answerInitialize();
    await api.connect(); // waits for the handshake already under way, opens no second one
    const second = await api.search.query({ query: 'b' });
    expect(api.lastSearchTransport).toBe('mcp');
    expect(second.request_id).toBe('req-mcp');
    expect(mcp.messages.filter((message) => message.method === 'initialize')).toHaveLength(1);
    await api.close();
  });

  it('opens the MCP session once, reuses it, and close() ends it with DELETE', async () => {
    const mcp = standardMcp();
    restServer();
    const api = client();
    expect(mcp.messages).toEqual([]);
    await api.search.query({ query: 'a' });
    await api.connect();
    await api.context.get({ query: 'b' });
    await api.search.query({ query: 'c' });
    expect(mcp.messages.filter((message) => message.method === 'initialize')).toHaveLength(1);
    expect(mcp.toolCalls.map((call) => call.name)).toEqual(['get_context', 'search_memories']);
    await api.close();
    expect(mcp.deleted).toEqual([SESSION]);
    await api.close(); // twice is fine
    expect(mcp.deleted).toEqual([SESSION]);
  });

  it.each<[string, Partial<SearchParams>]>([
    ['filters', { filters: { memory_type: 'fact' } }],
    ['search_mode', { search_mode: 'keyword' }],
    ['min_score', { min_score: 0.2 }],
    ['retrieval_profile', { retrieval_profile: 'precision' }],
    ['page', { page: 2 }],
    ['page_size', { page_size: 5 }],
  ])('a search with %s goes over REST', async (_name, extra) => {
    const mcp = standardMcp();
    const rest = restServer();
    const api = client();
    const result = await api.search.query({ query: 'seat', ownerId: 'u_42', ...extra });
    expect(api.lastSearchTransport).toBe('rest');
    expect(mcp.messages).toEqual([]);
    expect(rest).toEqual([
      { path: '/v1/search', body: { query: 'seat', owner_id: 'u_42', ...extra } },
    ]);
    expect(result).toEqual({ ...searchResponse, request_id: 'req-rest' });
  });

  it('isSimpleSearch ignores undefined fields', () => {
    expect(isSimpleSearch({ query: 'q', page: undefined, owner_id: 'u' })).toBe(true);
    expect(isSimpleSearch({ query: 'q', explain: false })).toBe(false);
  });

  it('an MCP session that cannot open leaves searches on REST', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/mcp`, () =>
        HttpResponse.json(envelope('INTERNAL', 'boom'), { status: 500 }),
      ),
    );
    const rest = restServer();
    const api = client();
    await expect(api.connect()).rejects.toMatchObject({ code: 'INTERNAL', status: 500 });
    const result = await api.search.query({ query: 'seat' });
    expect(api.lastSearchTransport).toBe('rest');
    expect(rest).toHaveLength(1);
    expect(result.request_id).toBe('req-rest');
  });

  it('an MCP call that fails on an open session falls back to REST for that call', async () => {
    let failNext = false;
    const mcp = mcpServer(() =>
      failNext
        ? HttpResponse.json(envelope('INTERNAL', 'boom'), { status: 500 })
        : toolResult({ ...searchResponse, request_id: 'req-mcp' }),
    );
    const rest = restServer();
    const api = client();
    await api.connect();
    failNext = true;
    const result = await api.search.query({ query: 'seat' });
    expect(mcp.toolCalls).toHaveLength(1);
    expect(api.lastSearchTransport).toBe('rest');
    expect(result.request_id).toBe('req-rest');
    expect(rest).toHaveLength(1);
    // The session it stops using is ended on the server, not left open there.
    await vi.waitFor(() => expect(mcp.deleted).toEqual([SESSION]));
  });

  it('an MCP tool error falls back to REST too', async () => {
    const mcp = mcpServer(() => ({
      isError: true,
      content: [
        { type: 'text', text: 'INTERNAL: down' },
        { type: 'text', text: JSON.stringify(envelope('INTERNAL', 'down')) },
      ],
    }));
    const rest = restServer();
    const api = client();
    await api.connect();
    await expect(api.context.get({ query: 'seat' })).resolves.toMatchObject({
      context_text: contextResponse.context_text,
    });
    expect(mcp.toolCalls).toHaveLength(1);
    expect(rest.map((call) => call.path)).toEqual(['/v1/context']);
  });

  it('an unreachable MCP endpoint leaves searches on REST, and a later search tries to open it again', async () => {
    let failures = 0;
    server.use(
      http.post(`${BASE_URL}/v1/mcp`, () => {
        failures++;
        return HttpResponse.error();
      }),
    );
    const rest = restServer();
    const api = client();
    await api.search.query({ query: 'a' });
    await vi.waitFor(() => expect(failures).toBeGreaterThan(0));
    await expect(api.connect()).rejects.toBeInstanceOf(APIConnectionError);
    const triesSoFar = failures;
    // Right after a failure, searches do not try again (no handshake beside every search)...
    await api.search.query({ query: 'b' });
    await new Promise((done) => setTimeout(done, 50));
    expect(failures).toBe(triesSoFar);
    // ...but they do once WARM_RETRY_MS has passed.
    vi.setSystemTime(Date.now() + 31_000);
    try {
      await api.search.query({ query: 'c' });
      await vi.waitFor(() => expect(failures).toBeGreaterThan(triesSoFar));
    } finally {
      vi.useRealTimers();
    }
    expect(rest).toHaveLength(3);
    expect(api.lastSearchTransport).toBe('rest');
  });

  it("transport 'rest' never uses MCP", async () => {
    const mcp = standardMcp();
    const rest = restServer();
    await client({ transport: 'rest' }).search.query({ query: 'seat' });
    expect(mcp.messages).toEqual([]);
    expect(rest).toHaveLength(1);
  });

  it("transport 'mcp' sends every search over MCP and surfaces MCP errors without fallback", async () => {
    const mcp = mcpServer((_name, args) =>
      args.query === 'missing'
        ? {
            isError: true,
            content: [
              { type: 'text', text: 'NOT_FOUND: nope' },
              { type: 'text', text: JSON.stringify(envelope('NOT_FOUND', 'nope', 'req-9')) },
            ],
          }
        : toolResult({ ...searchResponse, request_id: 'req-mcp' }),
    );
    const rest = restServer();
    const api = client({ transport: 'mcp' });
    await api.search.query({ query: 'seat', filters: { memory_type: 'fact' }, page: 2 });
    expect(mcp.toolCalls[0]).toEqual({
      name: 'search_memories',
      arguments: { query: 'seat', filters: { memory_type: 'fact' }, page: 2 },
    });
    const error = await api.search.query({ query: 'missing' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({
      code: 'NOT_FOUND',
      message: 'nope',
      status: 404,
      requestId: 'req-9',
    });
    expect(rest).toEqual([]);
    await api.close();
  });

  it("transport 'mcp' maps an HTTP error of the MCP endpoint to the same error class as REST", async () => {
    server.use(
      http.post(`${BASE_URL}/v1/mcp`, () =>
        HttpResponse.json(envelope('UNAUTHORIZED', 'Invalid API key', 'req-401'), { status: 401 }),
      ),
    );
    const error = await client({ transport: 'mcp' })
      .search.query({ query: 'seat' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'UNAUTHORIZED', status: 401, requestId: 'req-401' });
  });

  it("transport 'mcp': an unanswered tool call is an APITimeoutError", async () => {
    mcpServer(() => new Promise<Response>(() => undefined));
    const error = await client({ transport: 'mcp', timeoutMs: 100 })
      .search.query({ query: 'seat' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APITimeoutError);
  });

  it('hybrid: the caller abort during an MCP call is not retried over REST', async () => {
    mcpServer(() => new Promise<Response>(() => undefined));
    const rest = restServer();
    const controller = new AbortController();
    const api = client();
    await api.connect();
    const pending = api.search.query({ query: 'seat' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(rest).toEqual([]);
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryClient } from '../../../client/src/index.js';
import { startCluster, type Cluster } from '../../../scripts/cluster.js';
import { call, requestsLogged } from './cluster-requests.js';

const ACCEPT = 'application/json, text/event-stream';

describe('3 instances behind a round-robin balancer: MCP sessions shared in Redis, kill -9 of one', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({
      instances: 3,
      replica: false,
      sentinel: false,
      env: {
        MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '100000',
        MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '100000',
        MNEMO_MCP_RATE_LIMIT_PER_MINUTE: '100000',
        MNEMO_INFLIGHT_PER_WORKSPACE: '100',
      },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(
      new URL(`${cluster.state.balancer.url}/mcp`),
      { requestInit: { headers: { authorization: `Bearer ${cluster.state.apiKey}` } } },
    );
    const client = new Client({ name: 'cluster-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport };
  };

  it('the official SDK client: 100 % of calls succeed while requests rotate over every instance', async () => {
    const before = [0, 1, 2].map((index) => requestsLogged(cluster, index, '/mcp'));
    const { client, transport } = await connect();
    expect(transport.sessionId).toEqual(expect.any(String));
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain('search_memories');
    let succeeded = 0;
    const calls = 30;
    for (let index = 0; index < calls; index += 1) {
      const result = (await client.callTool(
        index % 2 === 0
          ? {
              name: 'add_memory',
              arguments: {
                text: `Balancer fact ${index}: the meeting moved to room ${index}.`,
                owner_id: 'mcp',
              },
            }
          : { name: 'search_memories', arguments: { query: 'meeting room', owner_id: 'mcp' } },
      )) as CallToolResult;
      if (result.isError !== true) succeeded += 1;
    }
    expect(succeeded).toBe(calls);
    // Every instance served part of the one session (read from their logs, which are written
    // asynchronously: a loaded machine may flush the last lines a moment later).
    await vi.waitFor(
      () => {
        const after = [0, 1, 2].map((index) => requestsLogged(cluster, index, '/mcp'));
        const served = after.map((count, index) => count - before[index]!);
        expect(
          Math.min(...served),
          `requests per instance: ${served.join(', ')}`,
        ).toBeGreaterThanOrEqual(5);
      },
      { timeout: 10_000, interval: 250 },
    );
    // DELETE ends the session on every instance, not only the one that got it.
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    for (const instance of cluster.state.instances) {
      const response = await fetch(`${instance.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${cluster.state.apiKey}`,
          accept: ACCEPT,
          'content-type': 'application/json',
          'mcp-session-id': sessionId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(response.status).toBe(404);
    }
    await client.close();
  });

  it('a session opened on one instance is served by another, and stays its opener’s', async () => {
    const [first, second] = cluster.state.instances;
    const headers = {
      authorization: `Bearer ${cluster.state.apiKey}`,
      accept: ACCEPT,
      'content-type': 'application/json',
    };
    const init = await fetch(`${first!.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 't', version: '1' },
        },
      }),
    });
    expect(init.status).toBe(200);
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    const ping = await fetch(`${second!.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    expect(ping.status).toBe(200);
    await ping.body?.cancel();
    const stranger = await fetch(`${second!.url}/mcp`, {
      method: 'POST',
      headers: {
        ...headers,
        authorization: 'Bearer mnemo_not_a_real_key_000000000',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
    });
    expect(stranger.status).toBe(401);
    await stranger.body?.cancel();
  });

  it('the project client over MCP searches through the balancer without falling back to REST', async () => {
    const client = new MemoryClient({
      baseUrl: cluster.state.balancer.url,
      apiKey: cluster.state.apiKey,
      transport: 'mcp',
    });
    for (let index = 0; index < 10; index += 1) {
      const found = await client.search.query({ query: 'meeting room', ownerId: 'mcp' });
      expect(Array.isArray(found.results)).toBe(true);
      expect(client.lastSearchTransport).toBe('mcp');
    }
    await client.close();
  });

  // Last: it leaves the cluster one instance short.
  it('kill -9 of an instance: no acknowledged write is lost, and writes succeed again once the balancer drops it', async () => {
    const acked: string[] = [];
    const failedAt: number[] = [];
    const startedAt = Date.now();
    let killedAt = 0;
    const writer = async (lane: number) => {
      for (let index = 0; Date.now() - startedAt < 8_000; index += 1) {
        try {
          const written = await call(cluster, 'POST', '/v1/memories', {
            body: {
              text: `Lane ${lane} wrote fact ${index} about the harbour.`,
              owner_id: `death-${lane}`,
            },
          });
          if (written.status === 200) acked.push(written.json.memory_id as string);
          else failedAt.push(Date.now());
        } catch {
          failedAt.push(Date.now());
        }
      }
    };
    const killer = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      cluster.killInstance(1);
      killedAt = Date.now();
    })();
    await Promise.all([writer(0), writer(1), writer(2), writer(3), killer]);
    expect(acked.length).toBeGreaterThan(10);
    // The balancer's health check (500 ms, 2 failures) drops the dead instance: no failure after.
    expect(failedAt.filter((at) => at > killedAt + 2_000)).toEqual([]);
    const missing: string[] = [];
    for (const id of acked)
      if ((await call(cluster, 'GET', `/v1/memories/${id}`)).status !== 200) missing.push(id);
    expect(missing).toEqual([]);
  });
});

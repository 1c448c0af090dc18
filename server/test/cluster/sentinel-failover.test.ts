import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../../scripts/cluster.js';
import { call } from './cluster-requests.js';

/** What a request was counted against: `r` of the RateLimit header (remaining in the window). */
const remainingOf = (headers: Headers): number | undefined => {
  const match = /;r=(\d+)/.exec(headers.get('ratelimit') ?? '');
  return match ? Number(match[1]) : undefined;
};

/** Consecutive requests through the balancer counted by one shared counter: r falls by 1 each. */
async function sharedCountdown(cluster: Cluster, requests: number): Promise<boolean> {
  const seen: (number | undefined)[] = [];
  for (let index = 0; index < requests; index += 1)
    seen.push(remainingOf((await call(cluster, 'GET', '/v1/memories?page_size=1')).headers));
  return seen.every(
    (value, index) => value !== undefined && (index === 0 || value === seen[index - 1]! - 1),
  );
}

describe('Redis through Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME)', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({
      instances: 2,
      replica: false,
      sentinel: true,
      env: {
        MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '5000',
        MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '5000',
        MNEMO_MCP_RATE_LIMIT_PER_MINUTE: '100000',
      },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('limits are shared by the instances, and work again within 20 s of kill -9 of the master', async () => {
    expect(await sharedCountdown(cluster, 8)).toBe(true);
    const transport = new StreamableHTTPClientTransport(
      new URL(`${cluster.state.balancer.url}/mcp`),
      { requestInit: { headers: { authorization: `Bearer ${cluster.state.apiKey}` } } },
    );
    const client = new Client({ name: 'failover-test', version: '1.0.0' });
    await client.connect(transport);

    const killed = await cluster.killRedisMaster();
    const killedAt = Date.now();
    let recoveredAfterMs: number | undefined;
    while (Date.now() - killedAt < 30_000) {
      const search = await client
        .callTool({ name: 'search_memories', arguments: { query: 'anything' } })
        .then((result) => (result as CallToolResult).isError !== true)
        .catch(() => false);
      if (search && (await sharedCountdown(cluster, 4))) {
        recoveredAfterMs = Date.now() - killedAt;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(recoveredAfterMs).toBeDefined();
    expect(recoveredAfterMs!).toBeLessThan(20_000);
    // A Sentinel promoted the replica; the MCP session (kept in Redis) survived the failover.
    const master = spawnSync(
      'redis-cli',
      [
        '-p',
        String(cluster.state.redis.sentinels[0]),
        'sentinel',
        'get-master-addr-by-name',
        'mnemo',
      ],
      { encoding: 'utf8' },
    ).stdout;
    expect(master).not.toContain(String(killed));
    expect(transport.sessionId).toEqual(expect.any(String));
    await client.close();
  });
});

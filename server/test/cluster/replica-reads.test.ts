import { CONSISTENCY_TOKEN_HEADER, CONSISTENCY_TOKEN_PATTERN } from '@mnemo/contract';
import { MemoryClient } from '../../../client/src/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../../scripts/cluster.js';
import { call, psql } from './cluster-requests.js';

const MAX_LAG_MS = 1500;

describe('read replicas behind the balancer (DATABASE_READ_URL)', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({
      instances: 2,
      sentinel: false,
      env: {
        MNEMO_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
        MNEMO_REPLICA_CHECK_INTERVAL_MS: '200',
        MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '100000',
        MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '100000',
      },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const replicaPort = () => cluster.state.replica!.port;
  const write = async (text: string, owner: string) => {
    const written = await call(cluster, 'POST', '/v1/memories', {
      body: { text, owner_id: owner },
    });
    expect(written.status).toBe(200);
    return {
      id: written.json.memory_id as string,
      token: written.headers.get(CONSISTENCY_TOKEN_HEADER),
    };
  };

  it('0 stale reads: a get and a search carrying the write’s token always see the write', async () => {
    let stale = 0;
    for (let index = 0; index < 40; index += 1) {
      const owner = `ryw-${index}`;
      const { id, token } = await write(`Fact number ${index}: the parcel went to Lisbon.`, owner);
      expect(token).toMatch(CONSISTENCY_TOKEN_PATTERN);
      const headers = { [CONSISTENCY_TOKEN_HEADER]: token! };
      const got = await call(cluster, 'GET', `/v1/memories/${id}`, { headers });
      const found = await call(cluster, 'POST', '/v1/search', {
        headers,
        body: { query: 'parcel Lisbon', owner_id: owner },
      });
      const results = (found.json.results ?? []) as { memory_id: string }[];
      if (got.status !== 200 || !results.some((result) => result.memory_id === id)) stale += 1;
    }
    expect(stale).toBe(0);
  });

  it('reads without a token go to the replica; with the token, past a paused replay, to the primary', async () => {
    psql(replicaPort(), 'select pg_wal_replay_pause()');
    try {
      const { id, token } = await write('Written while the replica stands still.', 'paused');
      // Served by the replica, which has not replayed the write: it is not there yet.
      const untokened = await call(cluster, 'GET', `/v1/memories/${id}`);
      expect(untokened.status).toBe(404);
      const tokened = await call(cluster, 'GET', `/v1/memories/${id}`, {
        headers: { [CONSISTENCY_TOKEN_HEADER]: token! },
      });
      expect(tokened.status).toBe(200);
      // The SDK client sends the token of its last write by itself.
      const client = new MemoryClient({
        baseUrl: cluster.state.balancer.url,
        apiKey: cluster.state.apiKey,
        transport: 'rest',
      });
      const mine = await client.memories.add({
        text: 'The client wrote this one.',
        ownerId: 'paused',
      });
      expect((await client.memories.get(mine.memory_id)).id).toBe(mine.memory_id);
      // Past the lag bound the replica is skipped: reads without a token see the write too.
      await new Promise((resolve) => setTimeout(resolve, MAX_LAG_MS + 1000));
      expect((await call(cluster, 'GET', `/v1/memories/${id}`)).status).toBe(200);
    } finally {
      psql(replicaPort(), 'select pg_wal_replay_resume()');
    }
  });

  it('a replica that goes down is skipped: reads keep answering from the primary', async () => {
    const { id } = await write('Still readable when the replica dies.', 'down');
    cluster.stopReplica();
    // One health check interval to notice; a read in between may answer 503.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const statuses: number[] = [];
    for (let index = 0; index < 20; index += 1)
      statuses.push((await call(cluster, 'GET', `/v1/memories/${id}`)).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../../scripts/cluster.js';
import { call } from './cluster-requests.js';

describe('kill -9 of an instance behind the balancer', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({
      instances: 3,
      replica: false,
      sentinel: false,
      env: {
        MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '100000',
        MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '100000',
        MNEMO_INFLIGHT_PER_WORKSPACE: '100',
      },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('no acknowledged write is lost, and writes succeed again once the balancer drops it', async () => {
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

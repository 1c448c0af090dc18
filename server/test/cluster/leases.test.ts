import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createLimitBackend,
  LEASE_HEARTBEAT_TTL_MS,
  type LimitBackend,
} from '../../src/limits/backend.js';
import { TEST_REDIS_URL } from '../support/redis.js';

const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url));
const LEASES = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A process holding LEASES in-flight leases (the whole limit) until killed. */
async function holder(prefix: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=mnemo-source', 'test/cluster/fixtures/hold-leases.ts'],
    {
      cwd: SERVER_DIR,
      env: { ...process.env, REDIS_URL: TEST_REDIS_URL, LEASE_PREFIX: prefix, LEASES: `${LEASES}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`holder exited with ${code}: ${output}`)));
  });
  return child;
}

describe('in-flight leases of an instance that dies', () => {
  const prefix = `mnemo-test-${randomBytes(6).toString('hex')}`;
  let backend: LimitBackend | undefined;
  afterAll(() => backend?.close());

  it('stay held while their instance lives and come back within 5 s of its kill -9', async () => {
    backend = await createLimitBackend({ redisUrl: TEST_REDIS_URL, keyPrefix: prefix });
    const child = await holder(prefix);
    try {
      // Past the heartbeat TTL, the living holder's leases are still there.
      await sleep(LEASE_HEARTBEAT_TTL_MS + 1_000);
      const refused = await backend.leases.acquire('inflight:ws', LEASES, 30_000);
      expect(refused).toMatchObject({ granted: false, active: LEASES });
    } finally {
      child.kill('SIGKILL');
    }
    const killed = Date.now();
    let granted = false;
    while (!granted && Date.now() - killed < 10_000) {
      const lease = await backend.leases.acquire('inflight:ws', LEASES, 30_000);
      granted = lease.granted;
      if (!granted) await sleep(100);
      else await lease.release();
    }
    expect(granted).toBe(true);
    expect(Date.now() - killed).toBeLessThanOrEqual(5_000);
  }, 60_000);
});

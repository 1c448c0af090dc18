import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLimitBackend,
  LEASE_HEARTBEAT_TTL_MS,
  type LimitBackend,
} from '../../src/limits/backend.js';
import { TEST_REDIS_URL } from '../support/redis.js';

/** Both stores must behave alike: the memory store on one instance, Redis across instances. */
const stores: Array<[string, (now: () => number) => Promise<LimitBackend>]> = [
  ['memory', (now) => createLimitBackend({ now })],
  [
    'redis',
    (now) =>
      createLimitBackend({
        redisUrl: TEST_REDIS_URL,
        keyPrefix: `mnemo-test-${randomBytes(6).toString('hex')}`,
        now,
      }),
  ],
];

describe.each(stores)('limit backend (%s)', (kind, make) => {
  let clock = Date.now();
  let backend: LimitBackend;
  beforeAll(async () => {
    backend = await make(() => clock);
  });
  afterAll(() => backend.close());

  it('counts a window and refuses past its points', async () => {
    const counter = backend.counter({ name: 'unit', points: 3, durationSeconds: 60 });
    const results = [];
    for (let i = 0; i < 4; i++) {
      results.push(
        await counter.consume('k1').then(
          (res) => ['ok', res.remainingPoints],
          (res: { remainingPoints: number }) => ['refused', res.remainingPoints],
        ),
      );
    }
    expect(results).toEqual([
      ['ok', 2],
      ['ok', 1],
      ['ok', 0],
      ['refused', 0],
    ]);
    // Another key has its own window.
    await expect(counter.consume('k2')).resolves.toMatchObject({ remainingPoints: 2 });
  });

  it('grants leases up to the limit, frees them on release and on expiry', async () => {
    const key = `lease-${randomBytes(4).toString('hex')}`;
    const first = await backend.leases.acquire(key, 2, 30_000);
    const second = await backend.leases.acquire(key, 2, 30_000);
    const third = await backend.leases.acquire(key, 2, 30_000);
    expect([first.granted, second.granted, third.granted]).toEqual([true, true, false]);
    expect(third.active).toBe(2);
    // On Redis a held lease lives from heartbeat to heartbeat (docs/scaling.md).
    const expiresIn = kind === 'redis' ? LEASE_HEARTBEAT_TTL_MS : 30_000;
    expect(third.retryAfterMs).toBeGreaterThan(expiresIn - 1_000);
    expect(third.retryAfterMs).toBeLessThanOrEqual(expiresIn);

    await first.release();
    const fourth = await backend.leases.acquire(key, 2, 30_000);
    expect(fourth.granted).toBe(true);

    // A crashed request never releases: its lease lapses after the TTL.
    const fifth = await backend.leases.acquire(key, 2, 30_000);
    expect(fifth.granted).toBe(false);
    clock += 30_001;
    const sixth = await backend.leases.acquire(key, 2, 30_000);
    expect(sixth).toMatchObject({ granted: true, active: 1 });
  });
});

describe('limit backend on an unreachable Redis', () => {
  it('fails the check instead of waiting for Redis', async () => {
    const backend = await createLimitBackend({ redisUrl: 'redis://127.0.0.1:1' });
    try {
      const counter = backend.counter({ name: 'down', points: 5, durationSeconds: 60 });
      const started = Date.now();
      await expect(counter.consume('k')).rejects.toBeInstanceOf(Error);
      await expect(backend.leases.acquire('k', 1, 1000)).rejects.toBeInstanceOf(Error);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await backend.close();
    }
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import type { QuotaGate, UsageReservation } from '../../src/services/quota.js';
import { BlockMeter, type MeteredItem, type UsageLedger } from '../../src/services/usage/blocks.js';
import { databaseLedger } from '../../src/services/usage/index.js';
import {
  createEmptyPostgresDatabase,
  createTestDatabase,
  describeDb,
  type EmptyPostgresDatabase,
  type TestDatabase,
  testBackend,
} from '../support/db.js';
import { Clock, counter, meter, newWorkspace, rejection } from './support.js';

const DAY = '2026-03-10';
const BLOCKS = { requestsPerBlock: 32, maxAgeMs: 60_000 };

/** The database ledger, counting the reservations it makes (statements that reach PostgreSQL). */
function countingLedger(inner: UsageLedger) {
  const calls = { reserve: 0, settle: 0 };
  const ledger: UsageLedger = {
    reserve: (...args) => {
      calls.reserve += 1;
      return inner.reserve(...args);
    },
    settle: (...args) => {
      calls.settle += 1;
      return inner.settle(...args);
    },
  };
  return { ledger, calls };
}

const readItem = (amount = 1, cap = 1_000): MeteredItem => ({
  resource: 'reads',
  windowKind: 'day',
  windowStart: DAY,
  amount,
  cap,
  resetsAt: new Date('2026-03-11T00:00:00Z'),
});

describeDb('block metering', () => {
  let database: TestDatabase;
  const clock = new Clock(new Date('2026-03-10T12:00:00Z'));
  const meters: BlockMeter[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(meters.splice(0).map((m) => m.drain()));
  });
  afterAll(async () => {
    await database?.close();
  });

  function blockMeter(options = BLOCKS) {
    const counted = countingLedger(
      databaseLedger(database.db, { reservationTtlMs: 300_000, now: clock.now }),
    );
    const meter = new BlockMeter(counted.ledger, options);
    meters.push(meter);
    return { meter, calls: counted.calls };
  }

  it('serves a run of requests from a few reservations and counts each exactly once', async () => {
    const ws = await newWorkspace(database.db);
    const { meter, calls } = blockMeter();
    for (let i = 0; i < 200; i++) {
      await (await meter.reserve(ws, [readItem()], 'launch')).commit();
    }
    // The first request is exact (it measures the headroom); blocks of 32 serve the rest.
    expect(calls.reserve).toBeLessThanOrEqual(1 + Math.ceil(199 / 32) + 1);
    // What blocks hold is reported in the reads window until it is settled.
    const held = meter.unsettled(ws);
    expect(held.length).toBeGreaterThan(0);
    for (const entry of held) {
      expect(entry).toMatchObject({ resource: 'reads', windowKind: 'day', windowStart: DAY });
    }
    await meter.drain();
    expect(await counter(database.db, ws, 'reads', DAY)).toEqual({ used: 200, reserved: 0 });
    expect(meter.unsettled(ws)).toEqual([]);
  });

  it('requests arriving while a block opens take from it instead of reserving on their own', async () => {
    const ws = await newWorkspace(database.db);
    const { meter, calls } = blockMeter();
    // The first request is exact and measures the headroom; then 16 arrive at once.
    await (await meter.reserve(ws, [readItem()], 'launch')).commit();
    const held = await Promise.all(
      Array.from({ length: 16 }, () => meter.reserve(ws, [readItem()], 'launch')),
    );
    await Promise.all(held.map((holding) => holding.commit()));
    expect(calls.reserve).toBe(2); // the exact one and one block
    await meter.drain();
    expect(await counter(database.db, ws, 'reads', DAY)).toEqual({ used: 17, reserved: 0 });
  });

  it('a block sized on a small request still serves a run of larger ones', async () => {
    const ws = await newWorkspace(database.db);
    const { meter, calls } = blockMeter();
    const tokens = (amount: number): MeteredItem => ({
      resource: 'embed_tokens',
      windowKind: 'period',
      windowStart: DAY,
      amount,
      cap: 1_000_000,
      resetsAt: undefined,
    });
    // Query sizes vary: 10 to 19 tokens, the first (which sizes the blocks) the smallest.
    for (let i = 0; i < 64; i++) {
      const size = 10 + (i % 10);
      await (await meter.reserve(ws, [readItem(), tokens(size)], 'launch')).commit();
    }
    // One exact reservation, then blocks of 32 requests: a block sized on 10 tokens a request
    // would run out after about 22 of these.
    expect(calls.reserve).toBeLessThanOrEqual(1 + Math.ceil(63 / 32));
  });

  it('commits actual amounts and refunds released requests', async () => {
    const ws = await newWorkspace(database.db);
    const { meter } = blockMeter();
    const tokens = (amount: number): MeteredItem => ({
      resource: 'embed_tokens',
      windowKind: 'period',
      windowStart: DAY,
      amount,
      cap: 100_000,
      resetsAt: undefined,
    });
    let expected = 0;
    for (let i = 0; i < 40; i++) {
      const holding = await meter.reserve(ws, [readItem(), tokens(20)], 'launch');
      if (i % 4 === 0) {
        await holding.release();
      } else {
        await holding.commit({ embed_tokens: 7 + i });
        expected += 7 + i;
      }
    }
    await meter.drain();
    expect(await counter(database.db, ws, 'reads', DAY)).toEqual({ used: 30, reserved: 0 });
    expect(await counter(database.db, ws, 'embed_tokens', DAY)).toEqual({
      used: expected,
      reserved: 0,
    });
  });

  it('near a cap reserves exactly: every last unit is granted once, then refused', async () => {
    const ws = await newWorkspace(database.db);
    const { meter } = blockMeter();
    let granted = 0;
    let refused = 0;
    for (let i = 0; i < 120; i++) {
      try {
        await (await meter.reserve(ws, [readItem(1, 100)], 'launch')).commit();
        granted += 1;
      } catch (error) {
        expect((error as { code?: string }).code).toBe('CAP_EXCEEDED');
        refused += 1;
      }
    }
    // Blocks' unused remainders never cost a request its unit: the refusal settles them first.
    expect({ granted, refused }).toEqual({ granted: 100, refused: 20 });
    await meter.drain();
    expect(await counter(database.db, ws, 'reads', DAY)).toEqual({ used: 100, reserved: 0 });
  });

  it('drain waits for requests in flight and settles what they commit', async () => {
    const ws = await newWorkspace(database.db);
    const { meter } = blockMeter();
    for (let i = 0; i < 3; i++) await (await meter.reserve(ws, [readItem()], 'launch')).commit();
    const open = await meter.reserve(ws, [readItem()], 'launch');
    let drained = false;
    const draining = meter.drain().then(() => (drained = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(drained).toBe(false);
    await open.commit();
    await draining;
    expect(await counter(database.db, ws, 'reads', DAY)).toEqual({ used: 4, reserved: 0 });
  });

  it('an aged block settles by itself', async () => {
    const ws = await newWorkspace(database.db);
    const { meter, calls } = blockMeter({ requestsPerBlock: 32, maxAgeMs: 50 });
    for (let i = 0; i < 5; i++) await (await meter.reserve(ws, [readItem()], 'launch')).commit();
    await expect
      .poll(async () => counter(database.db, ws, 'reads', DAY), { timeout: 5_000 })
      .toEqual({ used: 5, reserved: 0 });
    expect(calls.settle).toBe(2);
  });

  it('the metered gate refuses over the cap with the exact refusal, blocks or not', async () => {
    const { gate } = meter(database.db, { clock, blocks: BLOCKS });
    const ws = await newWorkspace(database.db);
    // launch: 250 writes a day.
    const held: UsageReservation[] = [];
    for (let i = 0; i < 250; i++) held.push(await gate.reserve({ workspaceId: ws, writes: 1 }));
    const refusal = await rejection(gate.reserve({ workspaceId: ws, writes: 1 }));
    expect(refusal.code).toBe('CAP_EXCEEDED');
    expect(refusal.details).toHaveProperty('writes');
    expect(refusal.headers['Retry-After']).toBeDefined();
    await Promise.all(held.map((r) => r.commit()));
    await gate.drain?.();
    expect(await counter(database.db, ws, 'writes', DAY)).toEqual({ used: 250, reserved: 0 });
  });
});

/** Two processes drawing blocks at once need connections of their own: PostgreSQL only. */
const describePostgres = testBackend() === 'postgres' ? describeDb : describe.skip;

describePostgres('block metering under concurrency', () => {
  let empty: EmptyPostgresDatabase;
  let first: DatabaseHandle;
  let second: DatabaseHandle;
  let gates: QuotaGate[];
  const clock = new Clock(new Date('2026-03-10T12:00:00Z'));

  beforeAll(async () => {
    empty = await createEmptyPostgresDatabase();
    first = await openDatabase({ databaseUrl: empty.databaseUrl });
    second = await openDatabase({ databaseUrl: empty.databaseUrl });
    gates = [
      meter(first.db, { clock, blocks: BLOCKS }).gate,
      meter(second.db, { clock, blocks: BLOCKS }).gate,
    ];
  });
  afterAll(async () => {
    await Promise.all(gates.map((g) => g.drain?.()));
    await first?.close();
    await second?.close();
    await empty?.drop();
  });

  it('two processes racing with blocks never grant more than the cap, and every grant counts', async () => {
    const ws = await newWorkspace(first.db);
    // launch: 1000 reads a day; 700 are used.
    await (await gates[0]!.reserve({ workspaceId: ws, reads: 700 })).commit();
    const race = async () =>
      Promise.all(
        Array.from({ length: 400 }, async (_, i) => {
          try {
            const held = await gates[i % 2]!.reserve({ workspaceId: ws, reads: 1 });
            await held.commit();
            return true;
          } catch (error) {
            expect((error as { code?: string }).code).toBe('CAP_EXCEEDED');
            return false;
          }
        }),
      );
    const granted = (await race()).filter(Boolean).length;
    expect(granted).toBeLessThanOrEqual(300);
    await Promise.all(gates.map((g) => g.drain?.()));
    expect(await counter(first.db, ws, 'reads', DAY)).toEqual({ used: 700 + granted, reserved: 0 });
    // Whatever blocks held back in the race is free again: the cap is reached exactly.
    let more = 0;
    for (;;) {
      try {
        await (await gates[0]!.reserve({ workspaceId: ws, reads: 1 })).commit();
        more += 1;
      } catch (error) {
        expect((error as { code?: string }).code).toBe('CAP_EXCEEDED');
        break;
      }
    }
    await Promise.all(gates.map((g) => g.drain?.()));
    expect(granted + more).toBe(300);
    expect(await counter(first.db, ws, 'reads', DAY)).toEqual({ used: 1000, reserved: 0 });
  });
});

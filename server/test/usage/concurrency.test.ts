import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import type { QuotaGate, UsageRequest, UsageReservation } from '../../src/services/quota.js';
import {
  createEmptyPostgresDatabase,
  describeDb,
  type EmptyPostgresDatabase,
  testBackend,
} from '../support/db.js';
import { Clock, counter, meter, newWorkspace } from './support.js';

const DAY = '2026-03-10';

/** Concurrency needs connections of its own: PostgreSQL only (PGlite runs one query at a time). */
const describePostgres = testBackend() === 'postgres' ? describeDb : describe.skip;

type Outcome = 'granted' | string;

/** Fires every request at once, alternating between the gates (two "server processes"). */
async function race(gates: QuotaGate[], requests: UsageRequest[]) {
  const held: UsageReservation[] = [];
  const outcomes = await Promise.all(
    requests.map(async (request, i): Promise<Outcome> => {
      try {
        held.push(await gates[i % gates.length]!.reserve(request));
        return 'granted';
      } catch (error) {
        return (error as { code?: string }).code ?? String(error);
      }
    }),
  );
  return { outcomes, held };
}

const count = (outcomes: Outcome[], value: Outcome) => outcomes.filter((o) => o === value).length;

describePostgres('metered quota under concurrency', () => {
  let empty: EmptyPostgresDatabase;
  let first: DatabaseHandle;
  let second: DatabaseHandle;
  const clock = new Clock(new Date('2026-03-10T12:00:00Z'));
  let gates: QuotaGate[];

  beforeAll(async () => {
    empty = await createEmptyPostgresDatabase();
    first = await openDatabase({ databaseUrl: empty.databaseUrl });
    second = await openDatabase({ databaseUrl: empty.databaseUrl });
    gates = [meter(first.db, { clock }).gate, meter(second.db, { clock }).gate];
    // Open every pooled connection first, so that the races below really run side by side.
    const warm = await newWorkspace(first.db);
    const { held } = await race(
      gates,
      Array.from({ length: 40 }, () => ({ workspaceId: warm, reads: 1 })),
    );
    await Promise.all(held.map((r) => r.release()));
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await empty?.drop();
  });

  it('of many requests racing for the last units, exactly the remaining ones pass', async () => {
    const ws = await newWorkspace(first.db);
    // launch: 250 writes a day; 240 are used.
    await (await gates[0]!.reserve({ workspaceId: ws, writes: 240 })).commit();
    const { outcomes, held } = await race(
      gates,
      Array.from({ length: 60 }, () => ({ workspaceId: ws, writes: 1, embeds: 1 })),
    );
    expect(count(outcomes, 'granted')).toBe(10);
    expect(count(outcomes, 'CAP_EXCEEDED')).toBe(50);
    expect(await counter(first.db, ws, 'writes', DAY)).toEqual({ used: 240, reserved: 10 });
    expect(await counter(first.db, ws, 'embeds', DAY)).toEqual({ used: 0, reserved: 10 });
    await Promise.all(held.map((r) => r.commit()));
    expect(await counter(first.db, ws, 'writes', DAY)).toEqual({ used: 250, reserved: 0 });
  });

  it('two requests for the very last unit never both pass', async () => {
    for (let round = 0; round < 5; round++) {
      const ws = await newWorkspace(first.db);
      await (await gates[0]!.reserve({ workspaceId: ws, writes: 249 })).commit();
      const { outcomes } = await race(gates, [
        { workspaceId: ws, writes: 1 },
        { workspaceId: ws, writes: 1 },
      ]);
      expect(outcomes.sort()).toEqual(['CAP_EXCEEDED', 'granted']);
    }
  });

  it('requests over different resource sets share a period cap exactly, without deadlocks', async () => {
    const ws = await newWorkspace(first.db);
    // launch: 100 000 embed tokens a period; 90 000 are used: room for ten requests of 1 000.
    await (await gates[1]!.reserve({ workspaceId: ws, embedTokens: 90_000 })).commit();
    const requests: UsageRequest[] = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? { workspaceId: ws, writes: 1, embeds: 2, embedTokens: 1000 }
        : { workspaceId: ws, reads: 1, embeds: 1, embedTokens: 1000 },
    );
    const { outcomes, held } = await race(gates, requests);
    expect(count(outcomes, 'granted')).toBe(10);
    expect(count(outcomes, 'CAP_EXCEEDED')).toBe(30);
    const grantedWrites = outcomes.filter((o, i) => o === 'granted' && i % 2 === 0).length;
    const grantedReads = 10 - grantedWrites;
    expect(await counter(first.db, ws, 'embed_tokens', DAY)).toEqual({
      used: 90_000,
      reserved: 10_000,
    });
    expect(await counter(first.db, ws, 'writes', DAY)).toEqual({
      used: 0,
      reserved: grantedWrites,
    });
    expect(await counter(first.db, ws, 'reads', DAY)).toEqual({ used: 0, reserved: grantedReads });
    expect(await counter(first.db, ws, 'embeds', DAY)).toEqual({
      used: 0,
      reserved: 2 * grantedWrites + grantedReads,
    });
    await Promise.all(held.map((r) => r.commit()));
    expect(await counter(first.db, ws, 'embed_tokens', DAY)).toEqual({
      used: 100_000,
      reserved: 0,
    });
  });

  it('reserves, commits and releases interleaved keep the counters exact', async () => {
    const ws = await newWorkspace(first.db);
    let committed = 0;
    const outcomes = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        try {
          const reservation = await gates[i % 2]!.reserve({ workspaceId: ws, writes: 3 });
          if (i % 3 === 0) {
            await reservation.release();
            return 'released';
          }
          await reservation.commit();
          committed += 3;
          return 'committed';
        } catch (error) {
          return (error as { code?: string }).code ?? String(error);
        }
      }),
    );
    // Only cap refusals, never a deadlock or another failure.
    expect(outcomes.filter((o) => !['released', 'committed', 'CAP_EXCEEDED'].includes(o))).toEqual(
      [],
    );
    expect(count(outcomes, 'committed')).toBeGreaterThan(0);
    const writes = await counter(first.db, ws, 'writes', DAY);
    expect(writes).toEqual({ used: committed, reserved: 0 });
    expect(writes.used).toBeLessThanOrEqual(250);
  });
});

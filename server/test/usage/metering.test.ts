import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type Database, executeRows, statementPoolOf } from '../../src/db/client.js';
import { unavailableError } from '../../src/db/faults.js';
import { getEntitlement } from '../../src/db/queries/entitlements.js';
import { Statement } from '../../src/db/queries/statement.js';
import { databaseEntitlements } from '../../src/services/plans.js';
import { unlimitedQuota } from '../../src/services/quota.js';
import { reconcileUsage, recordStorageFreed } from '../../src/services/usage/index.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';
import {
  billingEntitlement,
  Clock,
  counter,
  meter,
  newWorkspace,
  rejection,
  reservationStates,
} from './support.js';

const DAY = '2026-03-10';

describeDb('metered quota: reserve → commit / release, caps, reconciliation', () => {
  let database: TestDatabase;
  let db: TestDatabase['db'];
  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
  });
  afterAll(async () => database?.close());

  it('gives a workspace without entitlement an internal grant on the configured plan', async () => {
    const ws = await newWorkspace(db);
    const { gate } = meter(db, { internalGrantPlan: 'build' });
    await (await gate.reserve({ workspaceId: ws, writes: 1 })).commit();
    const entitlement = await getEntitlement(db, ws);
    expect(entitlement).toMatchObject({
      plan: 'build',
      status: 'active',
      entitlementSource: 'internal_grant',
      graceUntil: null,
    });
    expect(entitlement?.periodStart.toISOString()).toBe('2026-03-10T00:00:00.000Z');
    // build: a 30-day period.
    expect(entitlement?.periodEnd.toISOString()).toBe('2026-04-09T00:00:00.000Z');
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 1, reserved: 0 });
  });

  it('holds amounts while reserved, moves them to used on commit (actual amounts win)', async () => {
    const ws = await newWorkspace(db);
    const { gate } = meter(db);
    const reservation = await gate.reserve({
      workspaceId: ws,
      writes: 1,
      embeds: 2,
      embedTokens: 100,
    });
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 0, reserved: 1 });
    expect(await counter(db, ws, 'embeds', DAY)).toEqual({ used: 0, reserved: 2 });
    // embed_tokens counts in the period, which began the day of the grant.
    expect(await counter(db, ws, 'embed_tokens', DAY)).toEqual({ used: 0, reserved: 100 });
    expect(await reservationStates(db, ws)).toEqual(['reserved']);

    await reservation.commit({ embedTokens: 37 });
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 1, reserved: 0 });
    expect(await counter(db, ws, 'embeds', DAY)).toEqual({ used: 2, reserved: 0 });
    expect(await counter(db, ws, 'embed_tokens', DAY)).toEqual({ used: 37, reserved: 0 });
    // Settled: the reservation row is gone.
    expect(await reservationStates(db, ws)).toEqual([]);

    // Settling again changes nothing.
    await reservation.commit();
    await reservation.release();
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 1, reserved: 0 });
  });

  it('refunds a released reservation', async () => {
    const ws = await newWorkspace(db);
    const { gate } = meter(db);
    const reservation = await gate.reserve({ workspaceId: ws, reads: 5, embeds: 5 });
    expect(await counter(db, ws, 'reads', DAY)).toEqual({ used: 0, reserved: 5 });
    await reservation.release();
    expect(await counter(db, ws, 'reads', DAY)).toEqual({ used: 0, reserved: 0 });
    expect(await counter(db, ws, 'embeds', DAY)).toEqual({ used: 0, reserved: 0 });
    expect(await reservationStates(db, ws)).toEqual([]);
  });

  it('a request with nothing to meter touches nothing', async () => {
    const ws = await newWorkspace(db);
    const { gate } = meter(db);
    const reservation = await gate.reserve({ workspaceId: ws, writes: 0 });
    await reservation.commit();
    expect(await reservationStates(db, ws)).toEqual([]);
    expect(await getEntitlement(db, ws)).toBeUndefined();
    // The seam's default still lets everything through.
    await expect(unlimitedQuota.reserve({ workspaceId: ws, writes: 1e9 })).resolves.toBeDefined();
  });

  it('daily cap: refuses the request that would pass it, holds nothing, Retry-After to midnight UTC', async () => {
    const ws = await newWorkspace(db);
    const clock = new Clock(new Date('2026-03-10T23:00:00Z'));
    const { gate } = meter(db, { clock });
    await (await gate.reserve({ workspaceId: ws, writes: 249, embeds: 249 })).commit();
    await (await gate.reserve({ workspaceId: ws, writes: 1, embeds: 1 })).commit();
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 250, reserved: 0 });

    const refused = await rejection(gate.reserve({ workspaceId: ws, writes: 1, embeds: 1 }));
    expect(refused).toMatchObject({ code: 'CAP_EXCEEDED', status: 429 });
    expect(refused.headers).toEqual({ 'Retry-After': '3600' });
    expect(refused.message).toMatch(/writes \(today\).*launch plan|launch plan.*writes \(today\)/);
    expect(refused.details?.writes?.[0]).toMatch(/250 of 250 used or reserved today; 1 more/);
    // embeds were within their cap; all or nothing: they are not held either.
    expect(refused.details?.embeds).toBeUndefined();
    expect(await counter(db, ws, 'embeds', DAY)).toEqual({ used: 250, reserved: 0 });
    expect(await reservationStates(db, ws)).toEqual([]);

    // A second before midnight: one second to wait.
    clock.set('2026-03-10T23:59:59.500Z');
    expect((await rejection(gate.reserve({ workspaceId: ws, writes: 1 }))).headers).toEqual({
      'Retry-After': '1',
    });
    // The next UTC day counts afresh.
    clock.set('2026-03-11T00:00:01Z');
    await (await gate.reserve({ workspaceId: ws, writes: 1 })).commit();
    expect(await counter(db, ws, 'writes', '2026-03-11')).toEqual({ used: 1, reserved: 0 });
  });

  it('reservations in flight count against the cap until released', async () => {
    const ws = await newWorkspace(db);
    const { gate } = meter(db);
    const big = await gate.reserve({ workspaceId: ws, writes: 250 });
    expect((await rejection(gate.reserve({ workspaceId: ws, writes: 1 }))).code).toBe(
      'CAP_EXCEEDED',
    );
    await big.release();
    await (await gate.reserve({ workspaceId: ws, writes: 1 })).commit();
  });

  it('refuses a request larger than the cap on a window not used yet', async () => {
    const ws = await newWorkspace(db);
    const { gate } = meter(db);
    const refused = await rejection(gate.reserve({ workspaceId: ws, reads: 1001 }));
    expect(refused.code).toBe('CAP_EXCEEDED');
    expect(refused.details?.reads?.[0]).toMatch(/0 of 1000 used or reserved today; 1001 more/);
    expect(await counter(db, ws, 'reads', DAY)).toEqual({ used: 0, reserved: 0 });
  });

  it('period cap: counts across days, Retry-After until the period ends, resets with the next period', async () => {
    const ws = await newWorkspace(db);
    const clock = new Clock(new Date('2026-03-10T12:00:00Z'));
    const { gate } = meter(db, { clock });
    // launch: 100 000 embed tokens per 7-day period, which starts on the day of the grant.
    await (await gate.reserve({ workspaceId: ws, embedTokens: 60_000 })).commit();
    clock.set('2026-03-11T12:00:00Z');
    const refused = await rejection(gate.reserve({ workspaceId: ws, embedTokens: 50_000 }));
    expect(refused.code).toBe('CAP_EXCEEDED');
    // Until 2026-03-17T00:00Z: five and a half days.
    expect(refused.headers).toEqual({ 'Retry-After': String(5.5 * 86_400) });
    expect(refused.message).toMatch(/embed_tokens \(this period\)/);
    expect(refused.details?.embed_tokens?.[0]).toMatch(
      /60000 of 100000 used or reserved this period/,
    );
    await (await gate.reserve({ workspaceId: ws, embedTokens: 40_000 })).commit();
    expect(await counter(db, ws, 'embed_tokens', DAY)).toEqual({ used: 100_000, reserved: 0 });

    // The next period: a new window; the internal grant moves on to it.
    clock.set('2026-03-17T00:00:01Z');
    await (await gate.reserve({ workspaceId: ws, embedTokens: 100_000 })).commit();
    expect(await counter(db, ws, 'embed_tokens', '2026-03-17')).toEqual({
      used: 100_000,
      reserved: 0,
    });
    const entitlement = await getEntitlement(db, ws);
    expect(entitlement?.periodStart.toISOString()).toBe('2026-03-17T00:00:00.000Z');
    expect(entitlement?.periodEnd.toISOString()).toBe('2026-03-24T00:00:00.000Z');
  });

  it('storage is a level: no Retry-After, freed bytes make room again', async () => {
    const ws = await newWorkspace(db);
    const { gate, clock } = meter(db);
    // launch: 0.5 GB.
    await (await gate.reserve({ workspaceId: ws, storageBytes: 499_999_000 })).commit();
    const refused = await rejection(gate.reserve({ workspaceId: ws, storageBytes: 2000 }));
    expect(refused.code).toBe('CAP_EXCEEDED');
    expect(refused.headers).toEqual({});
    expect(refused.message).toMatch(/storage \(stored\).*does not reset by itself/);
    await recordStorageFreed(db, ws, 1500, clock.now());
    await (await gate.reserve({ workspaceId: ws, storageBytes: 2000 })).commit();
    expect(await counter(db, ws, 'storage', '1970-01-01')).toEqual({
      used: 499_999_500,
      reserved: 0,
    });
  });

  it('reconciliation expires reservations past their TTL and refunds them; a late commit still counts', async () => {
    const ws = await newWorkspace(db);
    const { gate, clock } = meter(db, { reservationTtlMs: 60_000 });
    const late = await gate.reserve({ workspaceId: ws, writes: 3, embedTokens: 30 });
    const released = await gate.reserve({ workspaceId: ws, writes: 2 });
    await gate.reserve({ workspaceId: ws, writes: 4 }); // its process "crashed"
    await (await gate.reserve({ workspaceId: ws, writes: 1 })).commit();

    clock.advance(30_000);
    expect((await reconcileUsage(db, clock.now())).expired).toBe(0);
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 1, reserved: 9 });

    clock.advance(31_000);
    const report = await reconcileUsage(db, clock.now());
    expect(report.expired).toBeGreaterThanOrEqual(3); // other tests' open reservations may expire too
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 1, reserved: 0 });
    expect(await counter(db, ws, 'embed_tokens', DAY)).toEqual({ used: 0, reserved: 0 });
    expect(await reservationStates(db, ws)).toEqual(['expired', 'expired', 'expired']);
    expect((await reconcileUsage(db, clock.now())).expired).toBe(0);

    // The slow request finished after all: its consumption counts, nothing is refunded twice.
    await late.commit();
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 4, reserved: 0 });
    expect(await counter(db, ws, 'embed_tokens', DAY)).toEqual({ used: 30, reserved: 0 });
    // Releasing an expired reservation refunds nothing more.
    await released.release();
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 4, reserved: 0 });
    expect(await reservationStates(db, ws)).toEqual(['expired']);

    // Expired reservations are deleted a day after expiring; counters stay.
    clock.advance(86_400_000);
    expect((await reconcileUsage(db, clock.now())).purged).toBe(0);
    clock.advance(1000);
    expect((await reconcileUsage(db, clock.now())).purged).toBeGreaterThanOrEqual(1);
    expect(await reservationStates(db, ws)).toEqual([]);
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 4, reserved: 0 });
  });

  it('billing grace: plan shows the paid tier, daily limits floored to launch, period caps kept', async () => {
    const ws = await newWorkspace(db);
    const { gate, plans, clock } = meter(db);
    await billingEntitlement(
      db,
      ws,
      'deploy',
      { start: '2026-02-08T06:00:00Z', end: '2026-03-10T06:00:00Z' },
      { status: 'past_due', graceUntil: '2026-03-15T00:00:00Z' },
    );
    const plan = await plans.resolve(ws, clock.now());
    expect(plan).toMatchObject({ state: 'grace', displayPlan: 'deploy', source: 'billing' });
    expect(plan.caps).toMatchObject({ writes: 250, reads: 1000, embeds: 1250, embed_tokens: 3e6 });

    await (await gate.reserve({ workspaceId: ws, writes: 250 })).commit();
    const refused = await rejection(gate.reserve({ workspaceId: ws, writes: 1 }));
    expect(refused.details?.writes?.[0]).toMatch(/250 of 250/);
    expect(refused.message).toMatch(/deploy plan/);
    // deploy's period cap, not launch's 100 000.
    await (await gate.reserve({ workspaceId: ws, embedTokens: 2_000_000 })).commit();
  });

  it('no plan in force: TRIAL_EXPIRED (402)', async () => {
    const lapsed = await newWorkspace(db);
    const { gate } = meter(db);
    await billingEntitlement(db, lapsed, 'scale', {
      start: '2026-02-01T00:00:00Z',
      end: '2026-03-03T00:00:00Z',
    });
    const refused = await rejection(gate.reserve({ workspaceId: lapsed, writes: 1 }));
    expect(refused).toMatchObject({ code: 'TRIAL_EXPIRED', status: 402 });
    expect(refused.message).toMatch(/scale plan has ended/);

    // With billing configured (no internal grants), a workspace that never paid has no plan.
    const unpaid = await newWorkspace(db);
    const billingOnly = meter(db, { internalGrantPlan: undefined });
    expect(
      (await rejection(billingOnly.gate.reserve({ workspaceId: unpaid, reads: 1 }))).code,
    ).toBe('TRIAL_EXPIRED');
    expect(await getEntitlement(db, unpaid)).toBeUndefined();
  });

  it('a canceled subscription past its period: CONTROL_PLANE_ONLY (403) on metered work', async () => {
    const canceled = await newWorkspace(db);
    const { gate } = meter(db);
    await billingEntitlement(
      db,
      canceled,
      'build',
      { start: '2026-02-01T00:00:00Z', end: '2026-03-03T00:00:00Z' },
      { status: 'canceled' },
    );
    const refused = await rejection(gate.reserve({ workspaceId: canceled, reads: 1 }));
    expect(refused).toMatchObject({ code: 'CONTROL_PLANE_ONLY', status: 403 });
    expect(refused.message).toMatch(/build subscription was canceled/);
  });

  it('entitlement unverifiable: writes refused with 503 and Retry-After, reads run unmetered, recovery is automatic', async () => {
    const ws = await newWorkspace(db);
    let failing = true;
    const store = databaseEntitlements(db, 'launch');
    const { gate } = meter(db, {
      loader: async (workspaceId, now) => {
        if (failing) throw new Error('billing check timed out');
        return store(workspaceId, now);
      },
    });
    const refused = await rejection(gate.reserve({ workspaceId: ws, writes: 1, embeds: 1 }));
    expect(refused).toMatchObject({ code: 'ENTITLEMENT_DEGRADED', status: 503 });
    expect(refused.headers).toEqual({ 'Retry-After': '30' });
    expect(await reservationStates(db, ws)).toEqual([]);

    await (await gate.reserve({ workspaceId: ws, reads: 1, embeds: 1 })).commit();
    expect(await counter(db, ws, 'reads', DAY)).toEqual({ used: 0, reserved: 0 });

    failing = false;
    await (await gate.reserve({ workspaceId: ws, writes: 1 })).commit();
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 1, reserved: 0 });
  });

  it('meters on PostgreSQL sessions that commit asynchronously; memories keep durable commits', async (ctx) => {
    const pool = statementPoolOf(db);
    if (!pool) return ctx.skip(); // PGlite: one connection, no pools
    const setting = async (on: Database) =>
      (
        await executeRows<{ value: string }>(
          on,
          sql`select current_setting('synchronous_commit') as value`,
        )
      )[0]?.value;
    expect(await setting(pool.asyncCommit)).toBe('off');
    expect(await setting(db)).toBe('on');
    expect(await setting(pool.db)).toBe('on');
    // A reservation is one statement there, with no transaction around it, and still atomic.
    const ws = await newWorkspace(db);
    const { gate } = meter(db);
    await (await gate.reserve({ workspaceId: ws, writes: 2 })).commit();
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 2, reserved: 0 });
  });

  it('a reservation whose answer was lost is a 503 to retry, not a 500', async () => {
    const ws = await newWorkspace(db);
    const { gate } = meter(db);
    await (await gate.reserve({ workspaceId: ws, writes: 1 })).commit();
    // The reservation statement always answers one row; the driver handing back none is how a
    // connection that lost the answer looked in the fault test (once in ~2,000 requests).
    const run = Statement.prototype.run;
    const lost = vi.spyOn(Statement.prototype, 'run').mockImplementation(function (
      this: Statement<never>,
      ...args
    ) {
      return this.text.includes('insert into usage_reservations')
        ? Promise.resolve([])
        : run.apply(this, args);
    });
    try {
      const error = await rejection(gate.reserve({ workspaceId: ws, writes: 1 }));
      expect(lost).toHaveBeenCalled();
      expect(unavailableError(error)?.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      lost.mockRestore();
    }
    expect(await counter(db, ws, 'writes', DAY)).toEqual({ used: 1, reserved: 0 });
  });
});

import { contract, UsageReconcileReport } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../src/services/plans.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { Clock, counter, meter, newWorkspace, reservationStates } from './support.js';

const TOKEN = 'admin-token-0123456789';
const PATH = contract.admin.reconcileUsage.path;

describeDb('POST /admin/usage/reconcile', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN, MNEMO_LIMITS: 'on' });
  }, 120_000);
  afterAll(async () => t?.close());

  it('requires the admin token: 401 without it or with a wrong one, nothing refunded', async () => {
    const ws = await newWorkspace(t.database.db, 'unauth');
    const clock = new Clock(new Date(Date.now() - 3_600_000));
    const { gate } = meter(t.database.db, { clock, reservationTtlMs: 60_000 });
    await gate.reserve({ workspaceId: ws, writes: 2 });

    const none = await request(t.app).post(PATH);
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('UNAUTHORIZED');
    const wrong = await request(t.app).post(PATH).set('x-admin-token', 'not-the-admin-token');
    expect(wrong.status).toBe(401);
    expect(await reservationStates(t.database.db, ws)).toEqual(['reserved']);
  });

  it('refunds a reservation past its expiry (a crashed request) and reports it', async () => {
    const ws = await newWorkspace(t.database.db, 'crashed');
    // Reserved an hour ago with a one-minute TTL: its expiry has long passed.
    const clock = new Clock(new Date(Date.now() - 3_600_000));
    const { gate } = meter(t.database.db, { clock, reservationTtlMs: 60_000 });
    await gate.reserve({ workspaceId: ws, writes: 3, embedTokens: 40 });
    const day = utcDay(clock.at).key;
    expect(await counter(t.database.db, ws, 'writes', day)).toEqual({ used: 0, reserved: 3 });

    const res = await request(t.app).post(PATH).set('x-admin-token', TOKEN);
    expect(res.status).toBe(200);
    expect(UsageReconcileReport.parse(res.body)).toEqual(res.body);
    // The earlier test's reservation is past its expiry too.
    expect(res.body.expired).toBeGreaterThanOrEqual(1);
    expect(await counter(t.database.db, ws, 'writes', day)).toEqual({ used: 0, reserved: 0 });
    expect(await reservationStates(t.database.db, ws)).toEqual(['expired']);

    const again = await request(t.app).post(PATH).set('x-admin-token', TOKEN);
    expect(again.body).toEqual({ expired: 0, purged: 0 });
  });

  it('leaves a reservation within its TTL alone', async () => {
    const ws = await newWorkspace(t.database.db, 'inflight');
    const { gate } = meter(t.database.db, {
      clock: new Clock(new Date()),
      reservationTtlMs: 600_000,
    });
    await gate.reserve({ workspaceId: ws, writes: 1 });
    const res = await request(t.app).post(PATH).set('x-admin-token', TOKEN);
    expect(res.body.expired).toBe(0);
    expect(await reservationStates(t.database.db, ws)).toEqual(['reserved']);
  });
});

describe('reconcile contract', () => {
  it('is an operator route at the path the issue names', () => {
    expect(`${contract.admin.reconcileUsage.method} ${PATH}`).toBe('POST /admin/usage/reconcile');
  });
});

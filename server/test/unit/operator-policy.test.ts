import type { NewAuditRecord } from '../../src/db/schema/index.js';
import { ServiceError } from '../../src/errors.js';
import { getBillingHealth } from '../../src/operations/admin.js';
import { createWorkspace } from '../../src/operations/api-keys.js';
import { receivePaymentCallback } from '../../src/operations/billing.js';
import type {
  AnonymousCaller,
  Caller,
  DashboardSessionCaller,
  DashboardTokenCaller,
  OperatorCaller,
} from '../../src/operations/context.js';
import { bootstrapDashboard, logoutDashboard } from '../../src/operations/dashboard.js';
import { getReadiness } from '../../src/operations/health.js';
import { guard, type PolicyMachinery } from '../../src/operations/policy.js';
import { getUsageToday } from '../../src/operations/usage.js';
import { describe, expect, it } from 'vitest';

const origin = { path: '/x', ip: null, userAgent: null, startedAt: process.hrtime.bigint() };
const operator: OperatorCaller = {
  door: 'rest',
  workspaceId: null,
  apiKeyId: null,
  via: 'admin_token',
  requestId: 'op-1',
  origin,
  audited: () => {},
};
const tenant: Caller = {
  door: 'rest',
  workspaceId: '00000000-0000-4000-8000-000000000001',
  apiKeyId: null,
  via: 'api_key',
  requestId: 'tenant-1',
  saveHistory: false,
  piiScan: false,
  origin,
  audited: () => {},
};

function machinery(): PolicyMachinery & { records: NewAuditRecord[] } {
  const records: NewAuditRecord[] = [];
  return {
    records,
    aiCost: undefined,
    pricing: { prices: { embedMicroInrPerToken: 0, genMicroInrPerToken: 0 }, extractor: undefined },
    audit: { record: (entry) => records.push(entry) },
  };
}

const health = { provider: 'none' } as never;

describe('the policy wrapper applies the route’s auth mode from its metadata', () => {
  it('an operator operation runs for the admin token and is audited without a workspace', async () => {
    const m = machinery();
    const run = guard(getBillingHealth, { billing: { health: async () => health } } as never, m);
    await expect(run(operator, undefined)).resolves.toBe(health);
    expect(m.records).toEqual([
      expect.objectContaining({
        requestId: 'op-1',
        workspaceId: null,
        route: '/v1/admin/billing/health',
        status: 200,
      }),
    ]);
  });

  it('refuses a tenant caller on an operator operation, and audits the refusal', async () => {
    const m = machinery();
    const run = guard(getBillingHealth, { billing: { health: async () => health } } as never, m);
    const refused = run(tenant as never, undefined);
    await expect(refused).rejects.toBeInstanceOf(ServiceError);
    await expect(refused).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(m.records).toEqual([expect.objectContaining({ requestId: 'tenant-1', status: 401 })]);
  });

  it('refuses the admin token on a tenant operation', async () => {
    const run = guard(getUsageToday, {} as never, machinery());
    await expect(run(operator as never, undefined)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });
});

describe('console callers: a session or a sign-in token, each only where its mode admits it', () => {
  const session = {
    sessionId: 's-1',
    userId: 'user-1',
    workspaceId: tenant.workspaceId,
    expiresAt: new Date(Date.now() + 60_000),
    csrfHash: '',
  };
  const consoleUser: DashboardSessionCaller = {
    door: 'rest',
    workspaceId: tenant.workspaceId,
    apiKeyId: null,
    via: 'dashboard_session',
    session,
    requestId: 'console-1',
    origin,
    audited: () => {},
  };
  const signIn: DashboardTokenCaller = {
    door: 'rest',
    workspaceId: null,
    apiKeyId: null,
    via: 'dashboard_token',
    requestId: 'sign-in-1',
    origin,
    audited: () => {},
  };
  const closed: string[] = [];
  const ctx = { console: { sessions: { close: async (token: string) => closed.push(token) } } };

  it('runs a session operation for the session, audited with its workspace and no key', async () => {
    const m = machinery();
    const run = guard(logoutDashboard, ctx as never, m);
    await expect(run(consoleUser, { sessionToken: 'cookie-1' })).resolves.toEqual({ ok: true });
    expect(closed).toEqual(['cookie-1']);
    expect(m.records).toEqual([
      expect.objectContaining({
        requestId: 'console-1',
        workspaceId: tenant.workspaceId,
        apiKeyId: null,
        method: 'POST',
        route: '/v1/dashboard/logout',
        status: 200,
      }),
    ]);
  });

  it('refuses a sign-in token, an API key and the admin token on a session operation', async () => {
    const run = guard(logoutDashboard, ctx as never, machinery());
    for (const caller of [signIn, tenant, operator]) {
      await expect(run(caller as never, { sessionToken: 'x' })).rejects.toMatchObject({
        code: 'UNAUTHORIZED',
      });
    }
    expect(closed).toEqual(['cookie-1']);
  });

  it('refuses a console session on a tenant operation and on a sign-in operation', async () => {
    await expect(
      guard(getUsageToday, {} as never, machinery())(consoleUser as never, undefined),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(
      guard(
        bootstrapDashboard,
        {} as never,
        machinery(),
      )(consoleUser as never, {
        access_token: 't',
      }),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('creates a workspace for an admin-scoped key only (a tenant key: 403, nothing made)', async () => {
    const m = machinery();
    const run = guard(createWorkspace, {} as never, m);
    await expect(run(tenant, { name: 'w' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(run({ ...tenant, keyScope: 'tenant' }, { name: 'w' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(m.records.map((r) => r.status)).toEqual([403, 403]);
  });
});

describe('anonymous callers: a public probe and the payment provider', () => {
  const anonymous = (via: AnonymousCaller['via']): AnonymousCaller => ({
    door: 'rest',
    workspaceId: null,
    apiKeyId: null,
    via,
    requestId: `${via}-1`,
    origin,
    audited: () => {},
  });
  const ready = { status: 'ready', checks: { database: 'ok', key_salt: 'ok' } } as const;
  const ctx = { health: { readiness: async () => ready } };

  it('a probe runs a public operation, audited without a workspace', async () => {
    const m = machinery();
    await expect(
      guard(getReadiness, ctx as never, m)(anonymous('public'), undefined),
    ).resolves.toBe(ready);
    expect(m.records).toEqual([
      expect.objectContaining({ workspaceId: null, route: '/ready', status: 200 }),
    ]);
  });

  it('neither may run a tenant operation, nor the other’s', async () => {
    const receipts: unknown[] = [];
    const billing = { receiveCallback: async (body: unknown) => receipts.push(body) };
    await expect(
      guard(receivePaymentCallback, { billing } as never, machinery())(anonymous('public'), {}),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(
      guard(getReadiness, ctx as never, machinery())(anonymous('payment_callback'), undefined),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    for (const via of ['public', 'payment_callback'] as const) {
      await expect(
        guard(getUsageToday, {} as never, machinery())(anonymous(via) as never, undefined),
      ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    }
    expect(receipts).toEqual([]);
  });
});

import type { NewAuditRecord } from '../../src/db/schema/index.js';
import { ServiceError } from '../../src/errors.js';
import { getBillingHealth } from '../../src/operations/admin.js';
import type { Caller, OperatorCaller } from '../../src/operations/context.js';
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

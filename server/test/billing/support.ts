import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { createDeps, type AppDeps } from '../../src/deps.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { createLogger } from '../../src/logger.js';
import { billingEntitlements } from '../../src/services/billing.js';
import { PlanService } from '../../src/services/plans.js';
import { createMeteredQuota } from '../../src/services/usage/index.js';
import { testConfig, type TestTenant } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { FakePayu } from './fake-payu.js';

export const ADMIN_TOKEN = 'admin-token-for-billing-tests';
export const WEBHOOK_SECRET = 'webhook-secret-for-billing-tests';

export interface BillingTestApp {
  app: Express;
  deps: AppDeps;
  database: TestDatabase;
  payu: FakePayu;
  tenant: TestTenant;
  addTenant(name?: string): Promise<TestTenant>;
  close(): Promise<void>;
}

/**
 * The real app with billing on (PayU against the fake on loopback), limits on, and the wiring
 * an install with billing uses: no internal grant, the billing-aware entitlement loader.
 */
export async function createBillingTestApp(
  env: Record<string, string> = {},
): Promise<BillingTestApp> {
  const payu = await new FakePayu('fakekey', 'fake-salt-for-tests').start();
  const database = await createTestDatabase();
  const config = testConfig({
    MNEMO_LIMITS: 'on',
    MNEMO_ADMIN_TOKEN: ADMIN_TOKEN,
    MNEMO_BILLING_PROVIDER: 'payu',
    MNEMO_BILLING_KEY: payu.key,
    MNEMO_BILLING_SALT: payu.salt,
    MNEMO_BILLING_FORM_URL: payu.formUrl,
    MNEMO_BILLING_VERIFY_URL: payu.verifyUrl,
    MNEMO_BILLING_WEBHOOK_SECRET: WEBHOOK_SECRET,
    MNEMO_BILLING_SUCCESS_URL: 'https://console.example/billing/success',
    MNEMO_BILLING_FAILURE_URL: 'https://console.example/billing/failure',
    MNEMO_BILLING_VERIFY_TIMEOUT_MS: '300',
    MNEMO_BILLING_VERIFY_RETRIES: '1',
    MNEMO_BILLING_PROBE_TIMEOUT_MS: '500',
    ...env,
  });
  const plans = new PlanService(database.db, {
    internalGrantPlan: undefined,
    loader: billingEntitlements(database.db, undefined),
    cacheMs: 30_000,
  });
  const deps: AppDeps = await createDeps(config, createLogger(config.logLevel), database, {
    plans,
    quota: createMeteredQuota({ db: database.db, plans }),
  });
  const addTenant = async (name = 'test'): Promise<TestTenant> => {
    const workspace = await createWorkspace(database.db, { name });
    const key = await deps.apiKeys.mint(workspace.id, 'test');
    return { workspaceId: workspace.id, apiKey: key.plaintext };
  };
  return {
    app: createApp(deps),
    deps,
    database,
    payu,
    tenant: await addTenant(),
    addTenant,
    close: async () => {
      await deps.background.drain();
      await deps.statistics.drain();
      await deps.audit.drain();
      await deps.limits.close();
      await database.close();
      await payu.stop();
    },
  };
}

/** The browser's part: POST the checkout form to the (fake) hosted page; PayU's callback fields. */
export async function payAtProvider(form: {
  url: string;
  fields: Record<string, string>;
}): Promise<Record<string, string>> {
  const res = await fetch(form.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form.fields).toString(),
  });
  if (!res.ok) throw new Error(`fake provider refused the form: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

/** The provider's server-to-server callback: the fields, urlencoded, to /v1/billing/webhook. */
export function postCallback(app: Express, fields: Record<string, string>) {
  return request(app)
    .post('/v1/billing/webhook')
    .type('form')
    .send(new URLSearchParams(fields).toString());
}

import { contract, listRoutes, routeAuth } from '@mnemo/contract';
import type { AppRoute } from '@ts-rest/core';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  apiKeys,
  learningSignals,
  memories,
  workspaceConnectorSettings,
  workspaces,
} from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const SECRET = 'internal-secret-for-tests-0002';
const ANY_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Webhook forwarding (spec auth mode I, rule 2): the internal subrequest headers authenticate
 * POST /v1/memories and nothing else. Every other route a key or an admin-scoped key opens is
 * listed from the contract, so a route added later is covered without touching this test.
 */
const bound = contract.memories.createMemory;
const keyRoutes = listRoutes(contract).filter(
  (route) =>
    (routeAuth(route) === 'api_key_or_session' || routeAuth(route) === 'admin_api_key') &&
    !(route.method === bound.method && route.path === bound.path),
);

const urlOf = (route: AppRoute) => route.path.replace(/:([A-Za-z_]+)/g, ANY_ID);

describeDb('internal subrequest headers are bound to POST /v1/memories', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_INTERNAL_SECRET: SECRET });
  }, 120_000);
  afterAll(async () => t?.close());

  /** Rows the routes could write: memories, workspaces, keys, connector settings, signals. */
  const rowCounts = async () => {
    const db = t.database.db;
    return Promise.all([
      db.$count(memories),
      db.$count(workspaces),
      db.$count(apiKeys),
      db.$count(workspaceConnectorSettings),
      db.$count(learningSignals),
    ]);
  };

  const internal = () => ({
    'x-internal-mcp': '1',
    'x-internal-secret': SECRET,
    'x-workspace-id': t.tenant.workspaceId,
  });

  it('covers the operator routes of this area', () => {
    const paths = keyRoutes.map((route) => `${route.method} ${route.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'GET /v1/audit/log',
        'GET /v1/pruning/metrics',
        'GET /v1/connectors/settings',
        'PATCH /v1/connectors/settings',
        'POST /v1/workspaces',
      ]),
    );
  });

  it('authenticates the bound route with the very same headers (control)', async () => {
    const res = await request(t.app)
      .post(bound.path)
      .set(internal())
      .send({ user_id: 'forwarded', text: 'Forwarded by the webhook relay.' });
    expect(res.status).toBe(200);
  });

  it.each(keyRoutes.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: the headers grant nothing (401), nothing is written',
    async (_name, route) => {
      const before = await rowCounts();
      const method = route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
      let req = request(t.app)[method](urlOf(route)).set(internal());
      if (route.method !== 'GET') req = req.send({});
      const res = await req;
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
      expect(await rowCounts()).toEqual(before);
    },
  );
});

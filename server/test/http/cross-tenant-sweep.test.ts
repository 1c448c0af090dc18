import { contract, routeAuth } from '@mnemo/contract';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import request from 'supertest';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertEndpoint } from '../../src/db/queries/webhooks.js';
import { apiKeys, webhookDeliveries } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { DASHBOARD_ENV, signInToConsole } from '../dashboard/support.js';
import { connect, listen, type Connected, type Listening } from '../mcp/support.js';

/**
 * The cross-tenant sweep: workspace B stores memories, links, pins and saved searches; workspace
 * A then calls every tenant route of the contract (walked, so routes added later are included)
 * and every MCP tool with B's ids and owner. Each must answer 404 or an empty or A-only result,
 * never B's data, and B's data must be as it was. A tenant route or tool missing from the tables
 * below fails the test: add it to the sweep.
 */

/** In B's memory text only, never sent by A: finding it in an answer to A is a leak. */
const SECRET = 'vault-code 5521-ALPHA';
/** A word of B's text that A searches for. */
const WORD = 'zyxquokka';
const B_OWNER = 'bertha-sweep';

interface BData {
  memoryIds: string[];
  parentId: string;
  childIds: string[];
  searchRequestId: string;
  contextRequestId: string;
  queryId: string;
  webhookEndpointId: string;
  webhookDeliveryId: string;
}

/**
 * What A expects back: a 404 NOT_FOUND; the refusal a missing id of A's own gets (`like`: the
 * same status, code and message with that id in place of B's); or a 2xx whose body `ok` accepts.
 */
type Expect =
  | { missing: true }
  | { like: { missingId: string; bId: string } }
  | { ok: (body: Record<string, unknown>) => void };

interface Probe {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
  expect: Expect | typeof ANY_ANSWER;
}

const MISSING: Expect = { missing: true };
/** A memory id that exists in no workspace. */
const NOWHERE = '00000000-0000-4000-8000-000000000000';
const results = (body: Record<string, unknown>) => body.results as unknown[];
const EMPTY_RESULTS: Expect = { ok: (body) => expect(results(body)).toEqual([]) };
/** Acts on A's own data: any 2xx, the scan does the rest. */
const OWN: Expect = { ok: () => undefined };
/** Hits, if any, are A's own memories (A wrote one with B's owner id in this sweep). */
const A_ONLY_HITS: Expect = OWN;
/** Routes whose answer depends on configuration (billing without a provider): not a 5xx. */
const ANY_ANSWER = { any: true } as const;

/**
 * One probe list per tenant route of the contract, by its dotted name. Inventory reads (no B id
 * in the request) come first, so that A's own audit rows do not yet hold the ids it sent.
 */
function restProbes(b: BData): Record<string, Probe[]> {
  const [b1, b2] = b.memoryIds as [string, string];
  const owner = { user_id: B_OWNER };
  return {
    'audit.getAuditLog': [{ expect: OWN }],
    'audit.getPruningMetrics': [{ expect: OWN }],
    'usage.getUsageToday': [{ expect: OWN }],
    'usage.getUsageHistory': [{ expect: OWN }],
    'usage.getMemoryBreakdown': [{ expect: OWN }],
    // JSON Lines: the scan reads the whole stream for B's text and ids.
    'ownerData.exportOwner': [
      { query: { owner_id: B_OWNER }, expect: OWN },
      { query: { all_owners: 'true' }, expect: OWN },
      { query: { owner_id: B_OWNER, after: b1 }, expect: OWN },
    ],
    'billing.getBillingStatus': [{ expect: OWN }],
    'connectors.getConnectorSettings': [{ expect: OWN }],
    'webhooks.listWebhookEndpoints': [{ expect: EMPTY_RESULTS }],
    'history.getSearchHistory': [
      { expect: EMPTY_RESULTS },
      { query: { owner_id: B_OWNER }, expect: EMPTY_RESULTS },
    ],
    'memories.listMemories': [
      { query: owner, expect: EMPTY_RESULTS },
      { query: { owner_id: B_OWNER, owner_type: 'user' }, expect: EMPTY_RESULTS },
      { query: { all_owners: 'true' }, expect: EMPTY_RESULTS },
    ],
    'pins.getPins': [
      { query: { owner_id: B_OWNER }, expect: { ok: (body) => expect(body.pins).toEqual([]) } },
    ],
    'memories.getMemory': [
      ...b.memoryIds.map((id) => ({ params: { id }, expect: MISSING })),
      { params: { id: b.childIds[0]! }, expect: MISSING },
    ],
    'memories.deleteMemory': [
      { params: { id: b.parentId }, expect: MISSING },
      { params: { id: b1 }, expect: MISSING },
    ],
    'memories.createMemory': [
      {
        // Same owner id and nearly the same text as B's: must not dedupe into B's memory.
        body: { text: `Bertha keeps the ${WORD} ledger`, user_id: B_OWNER, extract: false },
        expect: {
          ok: (body) => {
            expect(body.deduped ?? false).toBe(false);
            expect(b.memoryIds).not.toContain(body.memory_id);
          },
        },
      },
      {
        body: {
          text: 'Bertha moved her ledger',
          user_id: B_OWNER,
          replaces_memory_id: b1,
          extract: false,
        },
        // As for an id that exists nowhere: B's memory is not this owner's memory here.
        expect: { like: { missingId: NOWHERE, bId: b1 } },
      },
    ],
    'search.searchMemories': [
      { body: { query: `${WORD} ledger`, user_id: B_OWNER }, expect: A_ONLY_HITS },
      { body: { query: `${WORD} ledger`, search_mode: 'keyword' }, expect: A_ONLY_HITS },
    ],
    'search.getContext': [
      {
        body: { query: `${WORD} ledger`, user_id: B_OWNER },
        expect: { ok: (body) => expect(body.citations ?? []).toEqual(expect.any(Array)) },
      },
    ],
    'search.sendFeedback': [
      { body: { feedback: 'negative', request_id: b.searchRequestId }, expect: MISSING },
    ],
    'history.replaySearch': [{ body: { query_id: b.queryId }, expect: MISSING }],
    'history.sendContextFeedback': [
      { body: { request_id: b.contextRequestId, rating: 'negative' }, expect: MISSING },
    ],
    'links.createLink': [
      { params: { id: b1 }, body: { target_id: b2 }, expect: MISSING },
      { params: { id: b2 }, body: { target_id: b1, relation: 'related' }, expect: MISSING },
    ],
    'links.listLinks': [{ params: { id: b1 }, expect: MISSING }],
    'links.deleteLink': [{ params: { id: b1 }, query: { target_id: b2 }, expect: MISSING }],
    'pins.updatePins': [{ body: { owner_id: B_OWNER, unpin: [b1], pin: [b2] }, expect: MISSING }],
    'ingest.ingestConversation': [
      {
        body: {
          user_id: B_OWNER,
          messages: [{ role: 'user', content: `Remember my ${WORD} ledger` }],
          extract: false,
        },
        expect: OWN,
      },
    ],
    'ingest.ingest': [
      {
        body: { type: 'memory', text: `The ${WORD} ledger is mine`, user_id: B_OWNER },
        expect: OWN,
      },
    ],
    'connectors.updateConnectorSettings': [{ body: { webhook: { enabled: false } }, expect: OWN }],
    'webhooks.getWebhookEndpoint': [{ params: { id: b.webhookEndpointId }, expect: MISSING }],
    'webhooks.updateWebhookEndpoint': [
      { params: { id: b.webhookEndpointId }, body: { enabled: false }, expect: MISSING },
    ],
    'webhooks.rotateWebhookSecret': [{ params: { id: b.webhookEndpointId }, expect: MISSING }],
    'webhooks.listWebhookDeliveries': [{ params: { id: b.webhookEndpointId }, expect: MISSING }],
    'webhooks.replayWebhookDelivery': [
      {
        params: { id: b.webhookEndpointId, delivery_id: b.webhookDeliveryId },
        expect: MISSING,
      },
    ],
    'webhooks.deleteWebhookEndpoint': [{ params: { id: b.webhookEndpointId }, expect: MISSING }],
    // A loopback URL is refused here (private addresses are not allowed): never a 5xx.
    'webhooks.createWebhookEndpoint': [
      { body: { url: 'http://127.0.0.1:9/hook' }, expect: ANY_ANSWER },
    ],
    'billing.createCheckout': [{ body: { plan: 'build' }, expect: ANY_ANSWER }],
    'billing.openBillingPortal': [{ expect: ANY_ANSWER }],
    // Not an export file: refused, never a 5xx, nothing of B's in the answer.
    'ownerData.importOwner': [
      {
        headers: { 'content-type': 'application/x-ndjson' },
        body: JSON.stringify({ type: 'memory', id: b1 }) + '\n',
        expect: ANY_ANSWER,
      },
    ],
    // Last: erases A's own owner of that name; B's data is checked intact afterwards.
    'ownerData.eraseOwner': [{ body: { owner_id: B_OWNER }, expect: OWN }],
  };
}

function routesWithAuth(
  auth: ReturnType<typeof routeAuth>,
  router: AppRouter = contract,
  prefix = '',
): [string, AppRoute][] {
  return Object.entries(router).flatMap(([key, entry]): [string, AppRoute][] => {
    const name = prefix ? `${prefix}.${key}` : key;
    if (isAppRoute(entry)) return routeAuth(entry) === auth ? [[name, entry]] : [];
    return routesWithAuth(auth, entry as AppRouter, name);
  });
}
const tenantRoutes = () => routesWithAuth('api_key_or_session');

/** A's credentials for a request: its API key, or its console session (CSRF on unsafe methods). */
type Credentials = (method: string) => Record<string, string>;

/** Strings of B's that A must never be shown, except those A itself sent in that request. */
function leaksIn(answer: string, sent: string, forbidden: string[]): string[] {
  return forbidden.filter((value) => answer.includes(value) && !sent.includes(value));
}

describeDb(
  'cross-tenant sweep: every tenant route and MCP tool, with another workspace’s ids',
  () => {
    let t: TestApp;
    let a: TestTenant;
    let b: TestTenant;
    let bData: BData;
    let http: Listening;
    let forbidden: string[];

    const as = (tenant: TestTenant) => ({ 'x-api-key': tenant.apiKey });

    /** B's view of its own data, to compare before and after the sweep. */
    async function snapshotOfB(): Promise<unknown> {
      const list = await request(t.app)
        .get('/v1/memories')
        .query({ all_owners: 'true', page_size: '100' })
        .set(as(b));
      const memories = (list.body.results as Array<Record<string, unknown>>)
        .map(({ id, text, owner_id, lifecycle_state, pinned, updated_at }) => ({
          id,
          text,
          owner_id,
          lifecycle_state,
          pinned,
          updated_at,
        }))
        .sort((x, y) => String(x.id).localeCompare(String(y.id)));
      const links = await request(t.app).get(`/v1/memories/${bData.memoryIds[0]}/links`).set(as(b));
      const history = await request(t.app).get('/v1/search/history').set(as(b));
      const pins = await request(t.app)
        .get('/v1/profile/pins')
        .query({ owner_id: B_OWNER })
        .set(as(b));
      const webhooks = await request(t.app).get('/v1/webhooks/endpoints').set(as(b));
      const deliveries = await request(t.app)
        .get(`/v1/webhooks/endpoints/${bData.webhookEndpointId}/deliveries`)
        .set(as(b));
      return {
        memories,
        webhooks: webhooks.status === 200 ? webhooks.body.results : webhooks.status,
        deliveries: deliveries.status === 200 ? deliveries.body.results : deliveries.status,
        links: links.status === 200 ? links.body.results : links.status,
        history: history.status === 200 ? history.body.total : history.status,
        pins: pins.status === 200 ? pins.body.pins : pins.status,
      };
    }

    beforeAll(async () => {
      t = await createTestApp(DASHBOARD_ENV);
      a = t.tenant;
      b = await t.addTenant('workspace-b');
      http = await listen(t.app);

      const write = async (text: string, extra: Record<string, unknown> = {}) => {
        const res = await request(t.app)
          .post('/v1/memories')
          .set(as(b))
          .send({ text, user_id: B_OWNER, extract: false, ...extra });
        expect(res.status).toBe(200);
        return res.body.memory_id as string;
      };
      const b1 = await write(`Bertha keeps the ${WORD} ledger, ${SECRET}`);
      const b2 = await write(`Bertha hides the ${WORD} key under the mat`);
      const parentId = await write(
        `Bertha moved to Oslo in May and works at the ${WORD} archive. She loves skiing and her favourite food is lutefisk. She must renew her visa before June.`,
        { extract: true },
      );
      const children = await request(t.app)
        .get('/v1/memories')
        .query({ user_id: B_OWNER, page_size: '100' })
        .set(as(b));
      const childIds = (children.body.results as Array<{ id: string; parent_memory_id: string }>)
        .filter((m) => m.parent_memory_id === parentId)
        .map((m) => m.id);
      expect(childIds.length).toBeGreaterThan(0);

      expect(
        (await request(t.app).post(`/v1/memories/${b1}/links`).set(as(b)).send({ target_id: b2 }))
          .status,
      ).toBe(200);
      expect(
        (
          await request(t.app)
            .patch('/v1/profile/pins')
            .set(as(b))
            .send({ owner_id: B_OWNER, pin: [b1] })
        ).status,
      ).toBe(200);
      const search = await request(t.app)
        .post('/v1/search')
        .set(as(b))
        .set('x-save-history', '1')
        .send({ query: `${WORD} ledger`, user_id: B_OWNER });
      expect(search.status).toBe(200);
      expect(search.body.results.length).toBeGreaterThan(0);
      const context = await request(t.app)
        .post('/v1/context')
        .set(as(b))
        .send({ query: `${WORD} key`, user_id: B_OWNER });
      expect(context.status).toBe(200);
      const history = await request(t.app).get('/v1/search/history').set(as(b));
      expect(history.status).toBe(200);
      // Stored directly: its URL need not resolve, nothing dispatches in this test.
      const endpoint = await insertEndpoint(t.database.db, {
        workspaceId: b.workspaceId,
        url: 'https://hooks.example.com/bertha',
        description: 'B',
        eventTypes: [],
        secretCiphertext: t.deps.webhookSecrets.seal('whsec_' + 'A'.repeat(43) + '='),
      });
      const [delivery] = await t.database.db
        .insert(webhookDeliveries)
        .values({
          workspaceId: b.workspaceId,
          endpointId: endpoint.id,
          eventId: NOWHERE,
          eventSeq: 1,
          eventType: 'memory.created',
          memoryId: b1,
          payload: { type: 'memory.created' },
          status: 'failed',
          attempts: 10,
        })
        .returning();
      bData = {
        webhookEndpointId: endpoint.id,
        webhookDeliveryId: delivery!.id,
        memoryIds: [b1, b2, parentId, ...childIds],
        parentId,
        childIds,
        searchRequestId: search.headers['x-request-id'] as string,
        contextRequestId: context.headers['x-request-id'] as string,
        queryId: history.body.results[0].query_id as string,
      };
      forbidden = [
        SECRET,
        ...bData.memoryIds,
        bData.searchRequestId,
        bData.contextRequestId,
        bData.queryId,
        bData.webhookEndpointId,
        bData.webhookDeliveryId,
        'hooks.example.com',
        b.workspaceId,
      ];
    }, 180_000);

    afterAll(async () => {
      await t?.mcpSessions.closeAll();
      await http?.close();
      await t?.close();
    });

    /** Every tenant route with B's ids, as A with these credentials: the problems found. */
    async function sweepRest(credentials: Credentials): Promise<string[]> {
      const before = await snapshotOfB();
      const table = restProbes(bData);
      const routes = tenantRoutes();
      const unlisted = routes.map(([name]) => name).filter((name) => !(name in table));
      expect(unlisted, 'tenant routes missing from the sweep: add them to restProbes').toEqual([]);
      const stale = Object.keys(table).filter((name) => !routes.some(([n]) => n === name));
      expect(stale, 'sweep entries for routes the contract no longer has').toEqual([]);

      const problems: string[] = [];
      // Table order: the inventory reads first.
      for (const [name, probes] of Object.entries(table)) {
        const route = routes.find(([n]) => n === name)![1];
        for (const probe of probes) {
          const path = route.path.replace(/:(\w+)/g, (_, key: string) => probe.params?.[key] ?? '');
          const method = route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete' | 'put';
          let req = request(t.app)[method](path).set(credentials(route.method));
          for (const [key, value] of Object.entries(probe.headers ?? {})) req = req.set(key, value);
          if (probe.query) req = req.query(probe.query);
          const res = probe.body === undefined ? await req : await req.send(probe.body as object);
          const label = `${name} ${route.method} ${path} ${JSON.stringify(probe.query ?? {})}`;
          const sent = JSON.stringify([path, probe.query, probe.body]);
          const leaks = leaksIn(res.text, sent, forbidden);
          if (leaks.length > 0) problems.push(`${label}: answer holds B's ${leaks.join(', ')}`);
          if (res.status >= 500) problems.push(`${label}: ${res.status} ${res.text.slice(0, 200)}`);
          const expected = probe.expect as Expect | typeof ANY_ANSWER;
          if ('any' in expected) continue;
          if ('like' in expected) {
            const { missingId, bId } = expected.like;
            const swap = (value: unknown) =>
              value === undefined
                ? undefined
                : (JSON.parse(JSON.stringify(value).replaceAll(bId, missingId)) as object);
            const twinPath = path.replaceAll(bId, missingId);
            let twin = request(t.app)[method](twinPath).set(credentials(route.method));
            if (probe.query) twin = twin.query(swap(probe.query)!);
            const other =
              probe.body === undefined ? await twin : await twin.send(swap(probe.body)!);
            const answer = (r: request.Response) => [
              r.status,
              r.body?.error?.code,
              String(r.body?.error?.message ?? '')
                .replaceAll(bId, 'ID')
                .replaceAll(missingId, 'ID'),
            ];
            if (res.status < 400 || JSON.stringify(answer(res)) !== JSON.stringify(answer(other))) {
              problems.push(
                `${label}: B's id answered ${JSON.stringify(answer(res))}, a missing one ${JSON.stringify(answer(other))}`,
              );
            }
            continue;
          }
          if ('missing' in expected) {
            if (res.status !== 404 || res.body?.error?.code !== 'NOT_FOUND') {
              problems.push(
                `${label}: expected 404 NOT_FOUND, got ${res.status} ${res.text.slice(0, 200)}`,
              );
            } else if (/^No route/.test(res.body.error.message as string)) {
              problems.push(`${label}: the route is in the contract but not served`);
            }
            continue;
          }
          if (res.status < 200 || res.status >= 300) {
            problems.push(`${label}: expected 2xx, got ${res.status} ${res.text.slice(0, 200)}`);
            continue;
          }
          try {
            expected.ok(res.body as Record<string, unknown>);
          } catch (error) {
            problems.push(`${label}: ${(error as Error).message.split('\n')[0]}`);
          }
        }
      }
      expect(await snapshotOfB()).toEqual(before);
      return problems;
    }

    it('REST: every tenant route of the contract answers A with 404 or A’s own data only', async () => {
      expect(await sweepRest(() => as(a))).toEqual([]);
    }, 180_000);

    it('REST through a console session of another workspace: the same answers', async () => {
      const session = await signInToConsole(t.app, 'sweep-console-user');
      const problems = await sweepRest((method) => ({
        cookie: session.cookie,
        ...(method === 'GET' ? {} : { 'x-csrf-token': session.csrf }),
      }));
      expect(problems).toEqual([]);
    }, 180_000);

    it('dashboard routes: B’s workspace and keys are refused to A’s session, and unchanged', async () => {
      const session = await signInToConsole(t.app, 'sweep-dashboard-user');
      const [bKey] = await t.database.db
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .where(eq(apiKeys.workspaceId, b.workspaceId));
      expect(bKey).toBeDefined();
      const bKeyId = bKey!.id;
      const refused = (res: request.Response) => {
        expect([403, 404]).toContain(res.status);
        expect(res.body).toMatchObject({ ok: false, error: { code: expect.any(String) } });
      };
      const probes: Record<
        string,
        Array<{ query?: object; body?: object; check: (res: request.Response) => void }>
      > = {
        'dashboard.listDashboardApiKeys': [
          { query: { workspace_id: b.workspaceId }, check: refused },
          { check: (res) => expect(res.status).toBe(200) },
        ],
        'dashboard.createDashboardApiKey': [
          { body: { workspace_id: b.workspaceId, name: 'sneaky' }, check: refused },
        ],
        'dashboard.revokeDashboardApiKey': [{ body: { api_key_id: bKeyId }, check: refused }],
        'dashboard.listDashboardWorkspaces': [{ check: (res) => expect(res.status).toBe(200) }],
        'dashboard.createDashboardWorkspace': [
          {
            body: { name: 'sweep second workspace' },
            check: (res) => expect(res.status).toBe(200),
          },
        ],
        'dashboard.getOverviewStats': [{ check: (res) => expect(res.status).toBe(200) }],
        // Last: it ends the session.
        'dashboard.logoutDashboard': [{ check: (res) => expect(res.status).toBe(200) }],
      };
      const routes = routesWithAuth('dashboard_session');
      const unlisted = routes.map(([name]) => name).filter((name) => !(name in probes));
      expect(unlisted, 'dashboard routes missing from the sweep: add them').toEqual([]);

      const keysBefore = await t.database.db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.workspaceId, b.workspaceId));
      const problems: string[] = [];
      for (const [name, calls] of Object.entries(probes)) {
        const route = routes.find(([n]) => n === name)![1];
        for (const probe of calls) {
          const method = route.method.toLowerCase() as 'get' | 'post';
          let req = request(t.app)[method](route.path).set('cookie', session.cookie);
          if (route.method !== 'GET') req = req.set('x-csrf-token', session.csrf);
          if (probe.query) req = req.query(probe.query);
          const res = probe.body === undefined ? await req : await req.send(probe.body);
          const label = `${name} ${JSON.stringify(probe.query ?? probe.body ?? {})}`;
          const leaks = leaksIn(res.text, JSON.stringify([probe.query, probe.body]), [
            ...forbidden,
            bKeyId,
          ]);
          if (leaks.length > 0) problems.push(`${label}: answer holds B's ${leaks.join(', ')}`);
          try {
            probe.check(res);
          } catch (error) {
            problems.push(`${label}: ${res.status} ${(error as Error).message.split('\n')[0]}`);
          }
        }
      }
      expect(problems).toEqual([]);
      expect(
        await t.database.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, b.workspaceId)),
      ).toEqual(keysBefore);
    }, 180_000);

    it('MCP: every tool answers A with NOT_FOUND or A’s own data only', async () => {
      const before = await snapshotOfB();
      const [b1] = bData.memoryIds as [string];
      const probes: Record<string, Array<{ args: Record<string, unknown>; missing?: true }>> = {
        add_memory: [{ args: { text: `Bertha keeps the ${WORD} ledger`, owner_id: B_OWNER } }],
        search_memories: [{ args: { query: `${WORD} ledger`, owner_id: B_OWNER } }],
        get_context: [{ args: { query: `${WORD} ledger`, owner_id: B_OWNER } }],
        list_memories: [{ args: { owner_id: B_OWNER } }],
        get_memory: bData.memoryIds.map((id) => ({ args: { memory_id: id }, missing: true })),
        delete_memory: [
          { args: { memory_id: bData.parentId }, missing: true },
          { args: { memory_id: b1 }, missing: true },
        ],
        send_feedback: [
          { args: { feedback: 'negative', request_id: bData.searchRequestId }, missing: true },
        ],
      };
      const mcp: Connected = await connect(`${http.baseUrl}/mcp`, a.apiKey);
      try {
        const { tools } = await mcp.client.listTools();
        const unlisted = tools.map((tool) => tool.name).filter((name) => !(name in probes));
        expect(unlisted, 'MCP tools missing from the sweep: add them to its probes').toEqual([]);

        const problems: string[] = [];
        for (const [name, calls] of Object.entries(probes)) {
          for (const { args, missing } of calls) {
            const result = (await mcp.client.callTool({ name, arguments: args })) as {
              isError?: boolean;
              content: Array<{ type: string; text?: string }>;
              structuredContent?: Record<string, unknown>;
            };
            const label = `${name} ${JSON.stringify(args)}`;
            const answer = JSON.stringify(result);
            const leaks = leaksIn(answer, JSON.stringify(args), forbidden);
            if (leaks.length > 0) problems.push(`${label}: answer holds B's ${leaks.join(', ')}`);
            const text = result.content[0]?.text ?? '';
            if (missing) {
              if (!result.isError || !text.startsWith('NOT_FOUND')) {
                problems.push(`${label}: expected NOT_FOUND, got ${text.slice(0, 200)}`);
              }
            } else if (result.isError) {
              problems.push(`${label}: failed: ${text.slice(0, 200)}`);
            } else if (name === 'list_memories') {
              // A's own memories written with B's owner id in this sweep may be listed; B's never.
              const listed = (result.structuredContent?.results as Array<{ id: string }>) ?? [];
              expect(listed.every((m) => !bData.memoryIds.includes(m.id))).toBe(true);
            }
          }
        }
        expect(problems).toEqual([]);
      } finally {
        await mcp.client.close();
      }
      expect(await snapshotOfB()).toEqual(before);
    }, 180_000);

    it('B still sees all of its data through its own key', async () => {
      for (const id of bData.memoryIds) {
        const res = await request(t.app).get(`/v1/memories/${id}`).set(as(b));
        expect(res.status, id).toBe(200);
      }
      const search = await request(t.app)
        .post('/v1/search')
        .set(as(b))
        .send({ query: `${WORD} ledger`, user_id: B_OWNER, search_mode: 'keyword' });
      expect(JSON.stringify(search.body)).toContain(SECRET);
    });
  },
);

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { contract, listRoutes, routeMetadata } from '@mnemo/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { listAuditRecords } from '../../src/db/queries/audit.js';
import { TOOLS } from '../../src/mcp/tools.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { connect, errorEnvelopeOf, listen, type Connected, type Listening } from './support.js';

/**
 * The operations both doors reach run through one policy wrapper: the same call through REST and
 * through MCP must leave the same audit record, consume the same plan quota and meet the same
 * limit decision. Each door acts for a workspace of its own, so their counters can be compared.
 */

type Outcome =
  { ok: true; body: Record<string, unknown> } | { ok: false; code: string; message: string };

/** A REST call's outcome, in the shape a tool call's is read in. */
function restOutcome(res: request.Response): Outcome {
  if (res.status === 200) return { ok: true, body: res.body as Record<string, unknown> };
  const { code, message } = res.body.error as { code: string; message: string };
  return { ok: false, code, message };
}

async function toolOutcome(
  { client }: Connected,
  name: string,
  args: Record<string, unknown>,
): Promise<Outcome> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!result.isError)
    return { ok: true, body: result.structuredContent as Record<string, unknown> };
  const { code, message } = errorEnvelopeOf(result).error;
  return { ok: false, code, message };
}

/** The decision alone: passed, or refused with which code and what message (without the wait). */
const decision = (outcome: Outcome) =>
  outcome.ok
    ? 'ok'
    : `${outcome.code}: ${outcome.message
        .replace(/; retry in \d+ s$/, '')
        .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')}`;

/** One door per workspace: REST with one key, MCP (a session of the SDK's client) with another. */
interface Doors {
  t: TestApp;
  http: Listening;
  rest: (tenant: TestTenant) => Door;
  mcp: (tenant: TestTenant) => Promise<Door>;
  close(): Promise<void>;
}

/** The operations both doors reach, called the same way whatever the door. */
interface Door {
  tenant: TestTenant;
  add(args: Record<string, unknown>): Promise<Outcome>;
  search(args: Record<string, unknown>): Promise<Outcome>;
  context(args: Record<string, unknown>): Promise<Outcome>;
  feedback(args: { request_id: string; feedback: string }): Promise<Outcome>;
  list(args: Record<string, string>): Promise<Outcome>;
  get(id: string): Promise<Outcome>;
  remove(id: string): Promise<Outcome>;
  /** The request id a search or context call answered with (feedback names it). */
  requestIdOf(outcome: Outcome, res?: request.Response): string;
}

async function openDoors(env: Record<string, string>): Promise<Doors> {
  const t = await createTestApp(env);
  const http = await listen(t.app);
  const sessions: Connected[] = [];
  const rest = (tenant: TestTenant): Door => {
    const lastRequestId = new Map<Outcome, string>();
    const send = async (res: Promise<request.Response>) => {
      const answered = await res;
      const outcome = restOutcome(answered);
      lastRequestId.set(outcome, String(answered.headers['x-request-id']));
      return outcome;
    };
    const post = (path: string, body: Record<string, unknown>) =>
      send(request(t.app).post(path).set('x-api-key', tenant.apiKey).send(body));
    return {
      tenant,
      add: (args) => post('/v1/memories', args),
      search: (args) => post('/v1/search', args),
      context: (args) => post('/v1/context', args),
      feedback: (args) => post('/v1/feedback', args),
      list: (args) =>
        send(request(t.app).get('/v1/memories').query(args).set('x-api-key', tenant.apiKey)),
      get: (id) => send(request(t.app).get(`/v1/memories/${id}`).set('x-api-key', tenant.apiKey)),
      remove: (id) =>
        send(request(t.app).delete(`/v1/memories/${id}`).set('x-api-key', tenant.apiKey)),
      requestIdOf: (outcome) => lastRequestId.get(outcome) ?? '',
    };
  };
  const mcp = async (tenant: TestTenant): Promise<Door> => {
    const session = await connect(`${http.baseUrl}/mcp`, tenant.apiKey);
    sessions.push(session);
    return {
      tenant,
      add: (args) => toolOutcome(session, 'add_memory', args),
      search: (args) => toolOutcome(session, 'search_memories', args),
      context: (args) => toolOutcome(session, 'get_context', args),
      feedback: (args) => toolOutcome(session, 'send_feedback', args),
      list: (args) => toolOutcome(session, 'list_memories', args),
      get: (id) => toolOutcome(session, 'get_memory', { memory_id: id }),
      remove: (id) => toolOutcome(session, 'delete_memory', { memory_id: id }),
      requestIdOf: (outcome) => (outcome.ok ? String(outcome.body.request_id) : ''),
    };
  };
  return {
    t,
    http,
    rest,
    mcp,
    close: async () => {
      await Promise.all(sessions.map(({ client }) => client.close()));
      await http.close();
      await t.close();
    },
  };
}

/** The audit rows of the workspace's operations (MCP's session set-up requests name no route). */
async function operationAudit(t: TestApp, tenant: TestTenant) {
  await t.deps.background.drain();
  await t.deps.audit.drain();
  const rows = await listAuditRecords(t.database.db, { workspaceId: tenant.workspaceId });
  return rows
    .filter((row) => row.route !== null)
    .map((row) => ({
      method: row.method,
      route: row.route,
      status: row.status,
      workspaceId: row.workspaceId,
      byKey: row.apiKeyId !== null,
    }))
    .sort((a, b) =>
      `${a.route} ${a.method} ${a.status}`.localeCompare(`${b.route} ${b.method} ${b.status}`),
    );
}

/** An audit row as both doors must write it alike (each door acts for its own workspace). */
const withoutWorkspace = (row: Awaited<ReturnType<typeof operationAudit>>[number]) => ({
  method: row.method,
  route: row.route,
  status: row.status,
  byKey: row.byKey,
});

const usageOf = async (t: TestApp, tenant: TestTenant) => {
  const res = await request(t.app).get('/v1/usage/today').set('x-api-key', tenant.apiKey);
  expect(res.status).toBe(200);
  const { workspace_id, ...usage } = res.body as Record<string, unknown>;
  expect(workspace_id).toBe(tenant.workspaceId);
  return usage;
};

describe('policies as route metadata', () => {
  it('names the one route behind each MCP tool', () => {
    const byTool = listRoutes(contract)
      .filter((route) => routeMetadata(route).mcpTool !== undefined)
      .map((route) => [routeMetadata(route).mcpTool, `${route.method} ${route.path}`]);
    expect(Object.fromEntries(byTool)).toEqual({
      add_memory: 'POST /v1/memories',
      list_memories: 'GET /v1/memories',
      get_memory: 'GET /v1/memories/:id',
      delete_memory: 'DELETE /v1/memories/:id',
      search_memories: 'POST /v1/search',
      get_context: 'POST /v1/context',
      send_feedback: 'POST /v1/feedback',
    });
    expect(byTool.map(([tool]) => tool).sort()).toEqual(TOOLS.map((tool) => tool.name).sort());
  });

  it('prices exactly the routes that spend AI-provider money, and takes internal subrequests on one', () => {
    const routes = listRoutes(contract);
    const priced = routes
      .filter((route) => routeMetadata(route).cost !== undefined)
      .map((route) => `${route.method} ${route.path} ${routeMetadata(route).cost}`);
    expect(priced.sort()).toEqual(
      [
        'POST /v1/memories write',
        'POST /v1/search query',
        'POST /v1/context query',
        'POST /v1/memories/conversation conversation',
        'POST /v1/ingest ingest',
        'POST /v1/search/replay replay',
      ].sort(),
    );
    const internal = routes.filter((route) => routeMetadata(route).internalSubrequest === true);
    expect(internal.map((route) => `${route.method} ${route.path}`)).toEqual(['POST /v1/memories']);
  });
});

describeDb('one operation, two doors', () => {
  let doors: Doors | undefined;
  afterEach(async () => {
    await doors?.close();
    doors = undefined;
  });

  it('every operation both doors reach leaves the same audit record and the same usage', async () => {
    doors = await openDoors({ MNEMO_LIMITS: 'on' });
    const { t } = doors;
    const restTenant = t.tenant;
    const mcpTenant = await t.addTenant('mcp');
    const results: Record<string, string[]> = {};
    for (const door of [doors.rest(restTenant), await doors.mcp(mcpTenant)]) {
      const steps: Outcome[] = [];
      const added = await door.add({ text: 'Ada drinks green tea every morning.', user_id: 'ada' });
      steps.push(added);
      await door.add({ text: 'Ada moved to Lisbon in May.', user_id: 'ada', extract: false });
      const search = await door.search({ query: 'what does Ada drink', user_id: 'ada' });
      steps.push(search);
      steps.push(await door.context({ query: 'where does Ada live', user_id: 'ada' }));
      steps.push(
        await door.feedback({ request_id: door.requestIdOf(search), feedback: 'positive' }),
      );
      steps.push(await door.list({ user_id: 'ada' }));
      const id = added.ok ? String(added.body.memory_id) : '';
      steps.push(await door.get(id));
      steps.push(await door.remove(id));
      // A refused call is audited the same way too.
      steps.push(await door.get(id));
      results[door.tenant.workspaceId] = steps.map(decision);
    }
    expect(results[mcpTenant.workspaceId]).toEqual(results[restTenant.workspaceId]);
    expect(results[restTenant.workspaceId]).toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      expect.stringMatching(/^NOT_FOUND: /),
    ]);

    const restAudit = await operationAudit(t, restTenant);
    const mcpAudit = await operationAudit(t, mcpTenant);
    expect(restAudit).toHaveLength(9);
    expect(mcpAudit.map(withoutWorkspace)).toEqual(restAudit.map(withoutWorkspace));
    expect(new Set(mcpAudit.map((row) => row.workspaceId))).toEqual(
      new Set([mcpTenant.workspaceId]),
    );
    expect(restAudit).toContainEqual(
      expect.objectContaining({ method: 'GET', route: '/v1/memories/:id', status: 404 }),
    );

    const restUsage = await usageOf(t, restTenant);
    const mcpUsage = await usageOf(t, mcpTenant);
    expect(mcpUsage).toEqual(restUsage);
    expect(restUsage).toMatchObject({ writes: 2, reads: 2 });
  }, 120_000);

  it('with a priced provider, MCP meets the AI-cost burst and the global budget exactly as REST', async () => {
    // 1 INR per token: a 40-character text or query is about 10 INR; the burst is 15 INR a
    // minute per workspace, the installation's budget 25 INR a day.
    doors = await openDoors({
      MNEMO_EMBED_COST_INR_PER_1M_TOKENS: '1000000',
      MNEMO_AI_BUDGET_INR_PER_DAY: '25',
    });
    const { t } = doors;
    const burst: Record<string, string[]> = {};
    const restDoor = doors.rest(t.tenant);
    const mcpDoor = await doors.mcp(await t.addTenant('mcp'));
    for (const door of [restDoor, mcpDoor]) {
      burst[door.tenant.workspaceId] = [
        decision(await door.add({ text: 'a'.repeat(40), user_id: 'u1', extract: false })),
        decision(await door.add({ text: 'b'.repeat(40), user_id: 'u1', extract: false })),
        decision(await door.search({ query: 'c'.repeat(40), user_id: 'u1' })),
        decision(await door.context({ query: 'd'.repeat(40), user_id: 'u1' })),
        // Keyword search embeds nothing: it costs nothing and passes.
        decision(await door.search({ query: 'aaaa', user_id: 'u1', search_mode: 'keyword' })),
      ];
    }
    const refusedByBurst = 'RATE_LIMITED: AI cost burst exceeded: 15 INR per minute per workspace';
    expect(burst[restDoor.tenant.workspaceId]).toEqual([
      'ok',
      refusedByBurst,
      refusedByBurst,
      refusedByBurst,
      'ok',
    ]);
    expect(burst[mcpDoor.tenant.workspaceId]).toEqual(burst[restDoor.tenant.workspaceId]);

    // 20 INR of the day's 25 are spent: a call of 6 INR from any workspace, whichever door it
    // comes through, would pass the budget.
    const restOther = doors.rest(await t.addTenant('rest-2'));
    const mcpOther = await doors.mcp(await t.addTenant('mcp-2'));
    const budget: Record<string, string[]> = {};
    for (const door of [restOther, mcpOther]) {
      budget[door.tenant.workspaceId] = [
        decision(await door.add({ text: 'e'.repeat(24), extract: false })),
        decision(await door.context({ query: 'f'.repeat(24) })),
        decision(await door.search({ query: 'g'.repeat(24) })),
      ];
    }
    const overBudget =
      "COST_BUDGET_EXCEEDED: The installation's daily AI cost budget (25 INR) is spent";
    expect(budget[restOther.tenant.workspaceId]).toEqual([overBudget, overBudget, overBudget]);
    expect(budget[mcpOther.tenant.workspaceId]).toEqual(budget[restOther.tenant.workspaceId]);

    // Nothing refused was stored, and each refusal is audited alike.
    const stored = async (door: Door) => {
      const listed = await doors!.rest(door.tenant).list({ all_owners: 'true' });
      return listed.ok ? listed.body.total : undefined;
    };
    expect(await Promise.all([restDoor, mcpDoor, restOther, mcpOther].map(stored))).toEqual([
      1, 1, 0, 0,
    ]);
    for (const [rest, mcp] of [
      [restDoor, mcpDoor],
      [restOther, mcpOther],
    ] as const) {
      const restAudit = await operationAudit(t, rest.tenant);
      const mcpAudit = await operationAudit(t, mcp.tenant);
      expect(mcpAudit.map(withoutWorkspace)).toEqual(restAudit.map(withoutWorkspace));
    }
    expect(
      (await operationAudit(t, restDoor.tenant)).filter((row) => row.status === 429),
    ).toHaveLength(3);
    expect(
      (await operationAudit(t, mcpOther.tenant)).filter((row) => row.status === 429),
    ).toHaveLength(3);
  }, 120_000);
});

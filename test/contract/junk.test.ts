/**
 * Property-based junk on every route of the contract, REST and MCP: requests built from the
 * route's own zod schemas, spoiled with hand-written adversarial values, sent to the real app.
 * Whatever arrives, the answer is a declared status with the declared body (never a 5xx), and a
 * refused request writes nothing. Routes added to the contract are covered as they land.
 *
 * Seeded: MNEMO_JUNK_SEED (default below) and MNEMO_JUNK_RUNS (runs per route) reproduce a run;
 * a failure prints the seed and the counterexample.
 */
import { createServer, type Server } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { attachClientErrorHandler, PARSER_REFUSALS } from '../../server/src/http/client-error.js';
import { TOOLS } from '../../server/src/mcp/tools.js';
import { createTestApp, type TestApp } from '../../server/test/support/app.js';
import { describeDb } from '../../server/test/support/db.js';
import { DASHBOARD_ENV, signInToConsole, signToken } from '../../server/test/dashboard/support.js';
import { connect, listen, type Exchange, type Listening } from '../../server/test/mcp/support.js';
import { ErrorEnvelope } from '@mnemo/contract';
import { applyMutation, mutation } from '../src/junk.js';
import {
  contractRoutes,
  declaredStatuses,
  responseSchema,
  schemaInputs,
  sendRoute,
  validInputs,
  type ContractRoute,
  type Credentials,
} from '../src/routes.js';
import { changedTables, countRows } from '../src/rows.js';

const SEED = Number(process.env.MNEMO_JUNK_SEED ?? 20_261_124);
const RUNS = Number(process.env.MNEMO_JUNK_RUNS ?? 100);
fc.configureGlobal({ seed: SEED, numRuns: RUNS });

const ADMIN_TOKEN = 'junk-admin-token-0123456789';
const ROUTE_TIMEOUT_MS = 120_000;
// A fresh database with every migration: slow on PGlite when the machine is busy.
const SETUP_TIMEOUT_MS = 120_000;

/**
 * Statuses of requests Node's HTTP parser refuses before any route sees them (a URL or headers
 * too large, bad framing): answered by the server's clientError handler with the tenant
 * envelope, whichever route the request was meant for.
 */
const TRANSPORT_STATUSES = [400, 431];

/** Assertion messages name the seed, so a failure in CI can be replayed locally. */
const replay = `replay with MNEMO_JUNK_SEED=${SEED} MNEMO_JUNK_RUNS=${RUNS}`;

/**
 * A workspace's first metered request gives it its entitlement (an internal grant), whatever the
 * request's outcome: made here, so that the row counts compare only what junk could write.
 */
async function grantEntitlement(t: TestApp): Promise<void> {
  const res = await request(t.app)
    .get('/v1/usage/today')
    .set('authorization', `Bearer ${t.tenant.apiKey}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

describeDb('junk input on every route: never a 5xx, nothing written when refused', () => {
  let t: TestApp;
  let server: Server;
  let credentials: Credentials;

  beforeAll(async () => {
    t = await createTestApp({ ...DASHBOARD_ENV, MNEMO_ADMIN_TOKEN: ADMIN_TOKEN });
    // A real server as main.ts makes it, so that parser-level refusals meet the same handler.
    server = createServer(t.app);
    attachClientErrorHandler(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    credentials = {
      apiKey: t.tenant.apiKey,
      adminToken: ADMIN_TOKEN,
      dashboardToken: await signToken('junk-user'),
    };
    await grantEntitlement(t);
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await t?.close();
  });

  /** A fresh console session (junk on logout ends the one it is given). */
  const signIn = (): Promise<Credentials['session']> => signInToConsole(t.app, 'junk-user');

  /** Row counts once the background work of earlier requests has settled. */
  async function settledRows() {
    await t.deps.background.drain();
    return countRows(t.database.db);
  }

  const routes = contractRoutes();

  it('walks the whole contract', () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.map((entry) => entry.name)).toContain('memories.createMemory');
  });

  it.each(routes.map((entry) => [`${entry.route.method} ${entry.route.path}`, entry] as const))(
    '%s',
    async (_label, entry: ContractRoute) => {
      const routeCredentials =
        entry.auth === 'dashboard_session'
          ? { ...credentials, session: await signIn() }
          : credentials;
      const statuses = declaredStatuses(entry.route);
      let snapshot: Record<string, number> | undefined;
      await fc.assert(
        fc.asyncProperty(validInputs(entry.route), mutation, async (valid, change) => {
          const { input, raw } = applyMutation(valid, change);
          // The counts after one request are the next one's "before" (a failed run recounts).
          const before = snapshot ?? (await settledRows());
          snapshot = undefined;
          const res = await sendRoute(server, entry, input, routeCredentials, raw);
          const after = await settledRows();
          snapshot = after;
          const what = `${entry.name} answered ${res.status}: ${res.text.slice(0, 300)} (${replay})`;
          expect(res.status, what).toBeLessThan(500);
          // The parser's refusals carry no route: the tenant envelope with the handler's message.
          const transport =
            TRANSPORT_STATUSES.includes(res.status) &&
            ErrorEnvelope.safeParse(res.body).success &&
            Object.values(PARSER_REFUSALS).includes(res.body.error.message);
          if (!transport) {
            expect(statuses, `undeclared status; ${what}`).toContain(res.status);
            if (res.status >= 400) {
              const parsed = responseSchema(entry.route, res.status)?.safeParse(res.body);
              expect(parsed?.success, `body is not the declared error; ${what}`).toBe(true);
            }
          }
          if (res.status >= 400) {
            expect(changedTables(before, after), `a refused request wrote rows; ${what}`).toEqual(
              [],
            );
          }
        }),
      );
    },
    ROUTE_TIMEOUT_MS,
  );
});

describeDb('junk arguments on every MCP tool: an error, never a 5xx, nothing written', () => {
  let t: TestApp;
  let server: Listening;

  beforeAll(async () => {
    t = await createTestApp({ MNEMO_MCP_RATE_LIMIT_PER_MINUTE: '1000000' });
    server = await listen(t.app);
    await grantEntitlement(t);
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  it('lists every tool it junks', () => {
    expect(TOOLS.length).toBeGreaterThan(3);
  });

  it.each(TOOLS.map((tool) => [tool.name, tool] as const))(
    '%s',
    async (_name, tool) => {
      const log: Exchange[] = [];
      const { client } = await connect(`${server.baseUrl}/mcp`, t.tenant.apiKey, { log });
      try {
        await fc.assert(
          fc.asyncProperty(
            schemaInputs(tool.input),
            mutation.filter(
              (change) =>
                change.kind === 'field' ||
                change.kind === 'replace-body' ||
                change.kind === 'drop-field',
            ),
            async (valid, change) => {
              const { input } = applyMutation(
                { params: {}, query: {}, body: valid, headers: {} },
                { ...change, ...(change.kind === 'field' ? { where: 'body' as const } : {}) },
              );
              await t.deps.background.drain();
              const before = await countRows(t.database.db);
              log.length = 0;
              let refused: boolean;
              try {
                const result = (await client.callTool({
                  name: tool.name,
                  arguments: input.body as Record<string, unknown>,
                })) as CallToolResult;
                refused = result.isError === true;
              } catch (error) {
                const what = `${tool.name} threw ${String(error)} (${replay})`;
                expect(error instanceof McpError, what).toBe(true);
                refused = true;
              }
              const what = `${tool.name} with ${JSON.stringify(input.body)?.slice(0, 200)}: HTTP ${log.map((entry) => entry.status).join(',')} (${replay})`;
              for (const exchange of log) expect(exchange.status, what).toBeLessThan(500);
              if (refused) {
                await t.deps.background.drain();
                expect(
                  changedTables(before, await countRows(t.database.db)),
                  `a refused call wrote rows; ${what}`,
                ).toEqual([]);
              }
            },
          ),
        );
      } finally {
        await client.close();
      }
    },
    ROUTE_TIMEOUT_MS,
  );
});

/**
 * The client SDK against msw handlers derived from the contract (test/src/msw-contract.ts): every
 * client method, every status its route declares, schema-valid generated bodies. A 2xx resolves
 * to the declared body; an error status throws the client's typed error with the envelope's code;
 * every request the client sends parses with the route's own request schemas. And every route an
 * application is meant to call has a client method, so client and contract cannot drift.
 */
import { isOperatorRoute } from '@mnemo/contract';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  MemoryClient,
  MnemoError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from '@mnemo/client';
import { getResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContractMock, mswPath } from '../src/msw-contract.js';
import {
  declaredResponse,
  declaredStatuses,
  walkContract,
  type NamedRoute,
} from '../src/response-check.js';

const BASE_URL = 'http://mnemo.contract.test';
const mock = new ContractMock(BASE_URL);
const server = setupServer(...mock.handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

/** REST for searches too (the hybrid default sends simple ones over MCP); no retries, so one status is one answer. */
function client(): MemoryClient {
  return new MemoryClient({
    baseUrl: BASE_URL,
    apiKey: 'mnemo_contract',
    transport: 'rest',
    maxRetries: 0,
  });
}

/** Every client method, with the contract route it must call and arguments it accepts. */
const METHODS: Array<{
  method: string;
  route: string;
  call: (c: MemoryClient) => Promise<unknown>;
}> = [
  { method: 'health', route: 'health.getVersionedHealth', call: (c) => c.health() },
  {
    method: 'memories.add',
    route: 'memories.createMemory',
    call: (c) => c.memories.add({ text: 'Jane is allergic to peanuts', ownerId: 'jane' }),
  },
  {
    method: 'memories.list',
    route: 'memories.listMemories',
    call: (c) =>
      c.memories.list({ ownerId: 'jane', page: 2, page_size: 10, metadata: { tier: 'gold' } }),
  },
  { method: 'memories.get', route: 'memories.getMemory', call: (c) => c.memories.get('mem_1') },
  {
    method: 'memories.delete',
    route: 'memories.deleteMemory',
    call: (c) => c.memories.delete('mem_1'),
  },
  {
    method: 'search.query',
    route: 'search.searchMemories',
    call: (c) => c.search.query({ query: 'allergies', ownerId: 'jane', top_k: 5 }),
  },
  {
    method: 'context.get',
    route: 'search.getContext',
    call: (c) => c.context.get({ query: 'What does Jane eat?', ownerId: 'jane' }),
  },
  {
    method: 'feedback.send',
    route: 'search.sendFeedback',
    call: (c) => c.feedback.send({ feedback: 'positive', request_id: 'req-0123456789' }),
  },
  { method: 'usage.today', route: 'usage.getUsageToday', call: (c) => c.usage.today() },
  {
    method: 'usage.history',
    route: 'usage.getUsageHistory',
    call: (c) => c.usage.history({ days: 30 }),
  },
  { method: 'usage.memories', route: 'usage.getMemoryBreakdown', call: (c) => c.usage.memories() },
  { method: 'billing.status', route: 'billing.getBillingStatus', call: (c) => c.billing.status() },
  {
    method: 'billing.checkout',
    route: 'billing.createCheckout',
    call: (c) => c.billing.checkout({ plan: 'build', email: 'jane@example.com' }),
  },
];

/**
 * Published routes an application does not call through the SDK, each with its reason. Every
 * other published route outside the dashboard and admin areas needs a client method.
 */
const NOT_FOR_THE_CLIENT: Record<string, string> = {
  'health.getHealth': 'the unversioned twin of /v1/health, which client.health() calls',
  'health.getReadiness': 'a deployment probe for orchestrators and load balancers',
  'billing.receivePaymentCallback': 'called by the payment provider, signed by it, never by an app',
  'billing.openBillingPortal': 'legacy: the spec has it answer 410 Gone',
};

/** The client's error class for each status family (client/src/core/errors.ts). */
function errorClassFor(status: number): typeof MnemoError {
  if (status === 400) return BadRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return InternalServerError;
  return MnemoError;
}

function routeNamed(name: string): NamedRoute {
  const named = mock.routes.find((route) => route.name === name);
  if (!named) throw new Error(`the contract has no route ${name}`);
  return named;
}

describe('derived handlers', () => {
  it('cover every contract route, one handler each', () => {
    const routes = walkContract();
    expect(mock.handlers).toHaveLength(routes.length);
    expect(new Set(routes.map((route) => `${route.route.method} ${route.route.path}`)).size).toBe(
      routes.length,
    );
  });

  it('answer each route at its own path and method, with a schema-valid body for every declared status', async () => {
    for (const named of walkContract()) {
      const url = mswPath(BASE_URL, named.route).replace(/:(\w+)/g, 'p-$1');
      for (const status of declaredStatuses(named.route)) {
        mock.answer(named.name, status);
        // Straight through msw's handler matching, without the network interceptor: fast enough
        // for every status of every route.
        const request = new Request(url, {
          method: named.route.method,
          ...(named.route.method === 'GET'
            ? {}
            : { body: '{}', headers: { 'content-type': 'application/json' } }),
        });
        const response = await getResponse(mock.handlers, request);
        if (!response) throw new Error(`no handler answered ${named.name}`);
        const call = mock.calls.at(-1);
        expect(call?.route.name, `${named.name} ${status}`).toBe(named.name);
        expect(response.status).toBe(status);
        const declared = declaredResponse(named.route, status);
        const text = await response.text();
        if (declared.kind === 'schema') {
          const parsed = declared.schema.safeParse(JSON.parse(text));
          expect(
            parsed.success,
            `${named.name} ${status}: ${JSON.stringify(parsed.error?.issues)}`,
          ).toBe(true);
        } else {
          expect(text).toBe('');
        }
      }
      mock.reset();
    }
  });
});

describe('client methods against the contract', () => {
  for (const { method, route, call } of METHODS) {
    describe(`${method} → ${route}`, () => {
      const named = routeNamed(route);
      for (const status of declaredStatuses(named.route)) {
        it(`answers ${status} as declared`, async () => {
          mock.answer(route, status);
          const outcome = call(client());
          const body = () => mock.calls.at(-1)?.body;
          if (status >= 200 && status < 300) {
            const result = await outcome;
            const declared = declaredResponse(named.route, status);
            if (declared.kind === 'schema') {
              expect(declared.schema.safeParse(result).success).toBe(true);
              expect(result).toMatchObject(body() as object);
            }
          } else {
            const error = await outcome.then(
              () => {
                throw new Error(`${method} resolved on ${status}`);
              },
              (thrown: unknown) => thrown,
            );
            expect(error).toBeInstanceOf(errorClassFor(status));
            const envelope = body() as { error: { code: string; message: string } };
            expect(error).toMatchObject({
              status,
              code: envelope.error.code,
              message: envelope.error.message,
            });
          }
          const calls = mock.calls;
          expect(calls).toHaveLength(1);
          expect(calls[0]!.route.name).toBe(route);
          expect(calls[0]!.problems, 'the request breaks the route schemas').toEqual([]);
        });
      }
    });
  }
});

describe('client coverage of the contract', () => {
  it('has a method for every published route an application calls, and exclusions only for real routes', async () => {
    const hit = new Set<string>();
    for (const { call } of METHODS) {
      mock.reset();
      await call(client());
      for (const made of mock.calls) hit.add(made.route.name);
    }
    const names = new Set(walkContract().map((route) => route.name));
    for (const excluded of Object.keys(NOT_FOR_THE_CLIENT)) expect(names).toContain(excluded);

    const meantForClient = walkContract()
      .filter(({ route }) => !isOperatorRoute(route))
      .filter(({ name }) => !name.startsWith('dashboard.') && !name.startsWith('admin.'))
      .map(({ name }) => name)
      .filter((name) => !(name in NOT_FOR_THE_CLIENT));
    expect(meantForClient.filter((name) => !hit.has(name))).toEqual([]);
    // The table above names each method's route: it must be the one the method really calls.
    expect([...hit].sort()).toEqual([...new Set(METHODS.map((entry) => entry.route))].sort());
  });
});

/**
 * The response checker itself (test/src/response-check.ts): it must fail on an undeclared status
 * and on a body that does not parse, pass what the contract declares, and hold paths outside the
 * contract to the envelope. The wrapper is driven through a real HTTP handler with supertest.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  checkResponse,
  describeViolations,
  matchRoute,
  ResponseChecker,
  walkContract,
  type RecordedResponse,
} from '../src/response-check.js';

const REQUEST_ID = 'req-1';

function response(
  method: string,
  url: string,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): RecordedResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    method,
    url,
    status,
    headers: {
      'x-request-id': REQUEST_ID,
      ...(typeof body === 'string' ? {} : { 'content-type': 'application/json; charset=utf-8' }),
      ...headers,
    },
    body: Buffer.from(body === undefined ? '' : text),
  };
}

const envelope = (code: string) => ({ error: { code, message: 'nope' }, request_id: REQUEST_ID });
const health = { status: 'ok', version: '0.1.0' };

describe('checkResponse', () => {
  it('passes a declared status whose body parses', () => {
    const result = checkResponse(response('GET', '/healthz', 200, health));
    expect(result).toEqual({ subject: 'health.getHealth (GET /healthz)' });
    expect(
      checkResponse(response('GET', '/v1/memories/abc', 404, envelope('NOT_FOUND'))).problem,
    ).toBeUndefined();
  });

  it('fails a status the route does not declare', () => {
    const result = checkResponse(response('GET', '/v1/memories/abc', 418, envelope('BAD_REQUEST')));
    expect(result.problem).toMatch(/status 418 is not declared \(declared: 200, 400, 401/);
  });

  it('fails a body that does not parse with the declared schema, naming the field', () => {
    const result = checkResponse(response('GET', '/healthz', 200, { status: 'ok' }));
    expect(result.problem).toMatch(/body does not match the 200 schema: version: Required/);
    expect(checkResponse(response('GET', '/healthz', 200, 'ok')).problem).toMatch(/content type/);
  });

  it('fails an error that is not the envelope, or whose request_id differs from x-request-id', () => {
    expect(
      checkResponse(response('GET', '/v1/memories/abc', 404, { message: 'gone' })).problem,
    ).toMatch(/not the envelope/);
    const other = { ...envelope('NOT_FOUND'), request_id: 'someone-else' };
    expect(checkResponse(response('GET', '/v1/memories/abc', 404, other)).problem).toMatch(
      /differs from x-request-id/,
    );
    expect(
      checkResponse(response('GET', '/v1/memories', 429, envelope('RATE_LIMITED'))).problem,
    ).toMatch(/Retry-After/);
  });

  it('holds paths outside the contract to the envelope: 404, and 405 with Allow', () => {
    expect(
      checkResponse(response('GET', '/nowhere', 404, envelope('NOT_FOUND'))).problem,
    ).toBeUndefined();
    expect(
      checkResponse(
        response('GET', '/nowhere', 404, '<h1>Not found</h1>', { 'content-type': 'text/html' }),
      ).problem,
    ).toMatch(/not the JSON error envelope/);
    expect(checkResponse(response('GET', '/nowhere', 200, { ok: true })).problem).toMatch(
      /only an error/,
    );
    expect(
      checkResponse(response('PUT', '/v1/memories', 405, envelope('METHOD_NOT_ALLOWED'))).problem,
    ).toMatch(/Allow/);
    expect(
      checkResponse(
        response('PUT', '/v1/memories', 405, envelope('METHOD_NOT_ALLOWED'), {
          allow: 'GET, POST',
        }),
      ).problem,
    ).toBeUndefined();
  });

  it('skips bodies that are not JSON with a reason, and requires x-request-id everywhere', () => {
    const page = response('GET', '/mcp', 200, '<html></html>', { 'content-type': 'text/html' });
    expect(checkResponse(page)).toMatchObject({ skipped: 'HTML landing page' });
    const stream = response('GET', '/v1/mcp', 200, 'data: {}\n\n', {
      'content-type': 'text/event-stream',
    });
    expect(checkResponse(stream)).toMatchObject({ skipped: 'event stream' });
    const rpcError = {
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Session not found' },
      id: null,
    };
    expect(checkResponse(response('POST', '/mcp', 404, rpcError)).problem).toBeUndefined();
    const bare = response('GET', '/healthz', 200, health);
    delete bare.headers['x-request-id'];
    expect(checkResponse(bare).problem).toMatch(/x-request-id/);
  });

  it('matches a literal path before a parameter, and HEAD to the GET route', () => {
    const routes = walkContract();
    expect(matchRoute('GET', '/v1/memories/abc', routes)?.name).toBe('memories.getMemory');
    expect(matchRoute('HEAD', '/v1/memories/abc', routes)?.name).toBe('memories.getMemory');
    const literal = routes.find(
      ({ route }) => route.method === 'POST' && route.path === '/v1/memories/conversation',
    );
    if (literal)
      expect(matchRoute('POST', '/v1/memories/conversation', routes)?.name).toBe(literal.name);
    expect(matchRoute('PUT', '/v1/memories/abc', routes)).toBeUndefined();
  });
});

describe('ResponseChecker.wrap', () => {
  /** A stand-in server: answers what the test asks through the query, as a broken route would. */
  function handler(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://local');
    res.setHeader('x-request-id', REQUEST_ID);
    res.setHeader('content-type', 'application/json');
    res.statusCode = Number(url.searchParams.get('status') ?? 200);
    // Written in two chunks: the recorder must join them.
    res.write('{"status":"ok",');
    res.end(url.searchParams.get('tail') ?? '"version":"0.1.0"}');
  }

  it('records each response as it ends and reports the broken ones with the test that made them', async () => {
    const checker = new ResponseChecker(() => 'the current test');
    const app = checker.wrap(handler);
    await request(app).get('/healthz').expect(200);
    expect(checker.takeViolations()).toEqual([]);

    await request(app).get('/healthz?status=418').expect(418);
    await request(app).get('/healthz?tail=%22v%22:1%7D').expect(200);
    const violations = checker.takeViolations();
    expect(violations).toEqual([
      expect.objectContaining({
        test: 'the current test',
        request: 'GET /healthz?status=418',
        status: 418,
        problem: expect.stringMatching(/status 418 is not declared/),
      }),
      expect.objectContaining({
        request: 'GET /healthz?tail=%22v%22:1%7D',
        problem: expect.stringMatching(/version: Required/),
      }),
    ]);
    expect(describeViolations(violations)).toMatch(
      /^2 response\(s\) broke the contract:\n- GET \/healthz\?status=418 → 418/,
    );
    expect(checker.takeViolations()).toEqual([]);
    expect(checker.stats.checked).toBe(3);
  });
});

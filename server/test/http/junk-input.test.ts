import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { count } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachClientErrorHandler } from '../../src/http/client-error.js';
import { memories } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { DASHBOARD_ENV, signToken } from '../dashboard/support.js';

/** JSON as a client that escapes lone surrogates sends it (JSON.stringify does). */
const json = (value: unknown) => JSON.stringify(value);

describeDb('junk input is a 400 envelope, never a 500', () => {
  let t: TestApp;
  let auth: string;
  beforeAll(async () => {
    // The identity provider's settings too: the dashboard's sign-in takes junk tokens below.
    t = await createTestApp(DASHBOARD_ENV);
    auth = `Bearer ${t.tenant.apiKey}`;
  }, 60_000);
  afterAll(async () => t?.close());

  const rows = async () => (await t.database.db.select({ n: count() }).from(memories))[0]!.n;

  const post = (path: string, body: unknown) =>
    request(t.app)
      .post(path)
      .set('authorization', auth)
      .set('content-type', 'application/json')
      .send(json(body));

  function expectBadRequest(res: request.Response, field?: string) {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(typeof res.body.request_id).toBe('string');
    if (field) {
      const fields = Object.keys(res.body.error.details ?? {});
      expect(
        fields.some((name) => name === field || name.startsWith(`${field}.`)),
        fields.join(),
      ).toBe(true);
    }
  }

  describe('strings that are not well-formed UTF-16', () => {
    it.each([
      ['text', { owner_id: 'u1', text: 'tea \ud800' }, 'text'],
      [
        'a metadata value',
        { owner_id: 'u1', text: 'tea', metadata: { k: '\udfff' } },
        'metadata.k',
      ],
      ['a metadata key', { owner_id: 'u1', text: 'tea', metadata: { ['k\ud800']: 1 } }, 'metadata'],
      ['the owner id', { owner_id: 'a\ud800', text: 'tea' }, 'owner_id'],
      ['the namespace', { owner_id: 'u1', namespace: '\udc00x', text: 'tea' }, 'namespace'],
    ])('in %s of a write are refused, nothing stored', async (_what, body, field) => {
      const before = await rows();
      const res = await post('/v1/memories', body);
      expectBadRequest(res, field);
      expect(await rows()).toBe(before);
    });

    it('two distinct ill-formed owner ids never collapse into one owner', async () => {
      const first = await post('/v1/memories', { owner_id: 'x\ud800', text: 'first owner' });
      const second = await post('/v1/memories', { owner_id: 'x\ud801', text: 'second owner' });
      expectBadRequest(first, 'owner_id');
      expectBadRequest(second, 'owner_id');
    });

    it('in a search query, owner and metadata filter are refused', async () => {
      expectBadRequest(await post('/v1/search', { owner_id: 'u1', query: 'q\ud800' }), 'query');
      expectBadRequest(await post('/v1/search', { owner_id: '\udbff', query: 'q' }), 'owner_id');
      expectBadRequest(
        await post('/v1/search', {
          owner_id: 'u1',
          query: 'q',
          filters: { metadata: { k: 'v\ud800' } },
        }),
        'filters.metadata.k',
      );
    });

    it('in a JSON-encoded query parameter are refused', async () => {
      const res = await request(t.app)
        .get('/v1/memories')
        .query({ owner_id: 'u1', metadata: '{"k":"\\ud800"}' })
        .set('authorization', auth);
      expectBadRequest(res);
    });

    it('anywhere in a JSON body, even a field no schema names', async () => {
      const res = await post('/v1/feedback', {
        feedback: 'positive',
        request_id: 'r1',
        nested: [{ deep: '\ud800' }],
      });
      expectBadRequest(res, 'nested.0.deep');
    });
  });

  describe('inputs that cost work (issue 33): bounded, 400 or 401, never a 5xx', () => {
    const statuses: number[] = [];
    const record = (res: request.Response) => {
      statuses.push(res.status);
      return res;
    };
    afterAll(() => {
      expect(statuses.filter((status) => status >= 500)).toEqual([]);
    });

    const filterOf = (keys: number, value = 'v') =>
      Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, value]));

    it.each([
      ['65 keys', filterOf(65)],
      ['20,000 keys (seconds of the event loop before)', filterOf(20_000)],
      ['40,000 keys (past the database parameter limit: a 500 before)', filterOf(40_000)],
      ['one 20 KB value', { k: 'x'.repeat(20_000) }],
    ])('a metadata filter of %s is refused on search and context', async (_what, metadata) => {
      for (const path of ['/v1/search', '/v1/context']) {
        const started = Date.now();
        const res = record(await post(path, { owner_id: 'u1', query: 'q', filters: { metadata } }));
        expectBadRequest(res, 'filters.metadata');
        expect(Date.now() - started).toBeLessThan(5_000);
      }
    });

    it.each([
      ['one 20 KB value', { blob: 'x'.repeat(20_000) }],
      ['2,000 small keys', filterOf(2_000, 'value')],
    ])(
      'metadata of %s is refused on a write and an ingest, nothing stored',
      async (_what, metadata) => {
        const before = await rows();
        expectBadRequest(
          record(await post('/v1/memories', { owner_id: 'u1', text: 'tea', metadata })),
          'metadata',
        );
        expectBadRequest(
          record(
            await post('/v1/ingest', {
              type: 'document',
              owner_id: 'u1',
              text: 'First part.\n\nSecond part.',
              metadata,
            }),
          ),
          'metadata',
        );
        expect(await rows()).toBe(before);
      },
    );

    it('junk JWT claims at dashboard sign-in are 400 or 401; odd but well-formed ones sign in', async () => {
      const unusable = [
        '',
        'user\u0000one',
        '\ud800',
        '\udfff\ud800',
        'u'.repeat(10_000),
        '\u0007bell',
      ];
      const tokens = [
        ...(await Promise.all(unusable.map((sub) => signToken(sub)))),
        await signToken('fine-user', { claims: { email: 'a\u0000@x.test' } }),
        await signToken('fine-user', { claims: { email: 'x'.repeat(5_000) } }),
        await signToken('fine-user', { claims: { email: { nested: true } as unknown as string } }),
        'not-a-jwt',
        'a.b.c',
        '',
        'x'.repeat(20_000),
      ];
      const bootstrap = (token: string) =>
        request(t.app).post('/v1/dashboard/bootstrap').send({ access_token: token });
      for (const token of tokens) {
        const boot = record(await bootstrap(token));
        expect([400, 401], `${boot.status} ${JSON.stringify(boot.body).slice(0, 200)}`).toContain(
          boot.status,
        );
      }
      // A subject is an opaque identifier: format characters and path-like text are names.
      for (const sub of ['\u202eadmin', '../../etc/passwd', 'ünïcödé 用户 🙂']) {
        expect(record(await bootstrap(await signToken(sub))).status).toBe(200);
      }
    });
  });

  describe('timestamps outside what PostgreSQL stores', () => {
    it.each([
      '0000-01-01',
      '0000-06-15T00:00:00Z',
      '2026-02-30',
      '2026-13-01',
      '2026-01-01T25:00:00Z',
    ])('effective_at %s is refused', async (value) => {
      const before = await rows();
      expectBadRequest(
        await post('/v1/memories', { owner_id: 'u1', text: 'tea', effective_at: value }),
        'effective_at',
      );
      expect(await rows()).toBe(before);
    });

    it('a list filter in year 0 is refused', async () => {
      const res = await request(t.app)
        .get('/v1/memories')
        .query({ start_time: '0000-01-01' })
        .set('authorization', auth);
      expectBadRequest(res, 'start_time');
    });

    it('a search filter in year 0 is refused', async () => {
      expectBadRequest(
        await post('/v1/search', {
          owner_id: 'u1',
          query: 'q',
          filters: { end_time: '0000-12-31' },
        }),
        'filters.end_time',
      );
    });

    it('the first and last days of the window are taken', async () => {
      for (const value of ['0001-01-01T00:00:00Z', '9999-12-31']) {
        const res = await post('/v1/search', {
          owner_id: 'u1',
          query: 'q',
          filters: { start_time: value },
        });
        expect(res.status, `${value}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    });
  });

  describe('paging numbers', () => {
    it('a page whose offset overflows is refused on search and list', async () => {
      expectBadRequest(
        await post('/v1/search', { owner_id: 'u1', query: 'q', page: 1e300 }),
        'page',
      );
      expectBadRequest(
        await post('/v1/search', { owner_id: 'u1', query: 'q', page: Number.MAX_SAFE_INTEGER }),
        'page',
      );
      const list = await request(t.app)
        .get('/v1/memories')
        .query({ page: '99999999999999999999' })
        .set('authorization', auth);
      expectBadRequest(list, 'page');
    });
  });

  describe('identifier lengths', () => {
    it('an owner id over the bound is refused, nothing stored', async () => {
      const before = await rows();
      expectBadRequest(
        await post('/v1/memories', { owner_id: 'o'.repeat(10_000), text: 'tea' }),
        'owner_id',
      );
      expect(await rows()).toBe(before);
    });

    it('a metadata key over the bound is refused', async () => {
      expectBadRequest(
        await post('/v1/memories', {
          owner_id: 'u1',
          text: 'tea',
          metadata: { ['k'.repeat(10_000)]: 1 },
        }),
        'metadata',
      );
    });

    it('a memory id over the bound in a path is a 400 or 404, not a 500', async () => {
      const res = await request(t.app)
        .get(`/v1/memories/${'a'.repeat(5000)}`)
        .set('authorization', auth);
      expect([400, 404]).toContain(res.status);
      expect(res.body.error).toBeDefined();
    });
  });
});

describeDb('requests the HTTP parser refuses get the envelope', () => {
  let t: TestApp;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp();
    server = createServer(t.app);
    attachClientErrorHandler(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await t?.close();
  });

  /** Sends raw bytes and reads the whole answer until the server closes the connection. */
  function raw(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
      socket.setTimeout(5_000, () => {
        socket.destroy();
        reject(new Error(`no answer; got so far: ${answer}`));
      });
      socket.write(bytes, 'latin1');
    });
  }

  function parse(answer: string) {
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    return {
      status,
      head: head.toLowerCase(),
      body: JSON.parse(body) as { error: { code: string }; request_id: string },
    };
  }

  it('oversized headers: 431 with the envelope and Connection: close', async () => {
    const answer = parse(
      await raw(`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expect(answer.head).toContain('connection: close');
    expect(answer.head).toContain('content-type: application/json');
    expect(answer.body.error.code).toBe('BAD_REQUEST');
    expect(answer.body.request_id).toMatch(/.+/);
  });

  it.each([
    ['a broken request line', 'GARBAGE\r\n\r\n'],
    [
      'both Content-Length and chunked',
      'POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'a bad chunk size',
      'POST /v1/memories HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n',
    ],
    [
      'a header with a control character',
      'GET /v1/health HTTP/1.1\r\nHost: x\r\nX-A: b\u0001c\r\n\r\n',
    ],
  ])('%s: 400 with the envelope', async (_what, bytes) => {
    const answer = parse(await raw(bytes));
    expect(answer.status).toBe(400);
    expect(answer.head).toContain('connection: close');
    expect(answer.body.error.code).toBe('BAD_REQUEST');
  });
});

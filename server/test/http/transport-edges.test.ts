import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { attachClientErrorHandler } from '../../src/http/client-error.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

describeDb('transport edge cases', () => {
  let t: TestApp;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp();
    server = createServer(t.app);
    // Short bounds, so the slow client below is cut within the test's time.
    attachClientErrorHandler(server, { headersMs: 500, requestMs: 2_000, checkEveryMs: 100 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await t?.close();
  });

  /** Writes raw bytes; resolves with what came back and when the server closed the connection. */
  function raw(bytes: string): Promise<{ answer: string; closedAfterMs: number }> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
      socket.on('error', () => undefined);
      socket.setTimeout(10_000, () => {
        socket.destroy();
        reject(new Error(`still open after 10 s; got so far: ${answer}`));
      });
      socket.write(bytes, 'latin1');
    });
  }

  it('answers an HTTP/1.1 request without Host with the envelope', async () => {
    // Node's own check answered an empty 400.
    const { answer } = await raw('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as {
      error: { code: string; details: Record<string, string[]> };
      request_id: string;
    };
    expect(body.error.code).toBe('BAD_REQUEST');
    expect(body.error.details.host).toBeDefined();
    expect(answer.toLowerCase()).toContain(`x-request-id: ${body.request_id.toLowerCase()}`);
  });

  it('still serves a request with Host', async () => {
    const { answer } = await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('closes a connection whose headers never finish', async () => {
    // Node's defaults kept it open for over a minute.
    const { closedAfterMs } = await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(closedAfterMs).toBeLessThan(3_000);
  });
});

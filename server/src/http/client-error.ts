import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS } from '@mnemo/contract';
import { errorEnvelope } from './errors.js';
import { ServiceError } from '../errors.js';

/** The messages of the parser's refusals (tests tell them from a route's answers by them). */
export const PARSER_REFUSALS = {
  tooLarge: 'Request headers are too large',
  malformed: 'Malformed HTTP request',
} as const;

/** Bounds on a slow client: whole headers within this, the whole request within the next. */
export const TRANSPORT_TIMEOUTS = { headersMs: 10_000, requestMs: 60_000, checkEveryMs: 1_000 };

/** Node's parser error codes that mean "headers too large": 431 rather than 400. */
const TOO_LARGE_CODES = new Set(['HPE_HEADER_OVERFLOW']);
/** The client went away or timed out: there is nobody to answer. */
const GONE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ERR_HTTP_REQUEST_TIMEOUT']);

/**
 * Answers requests Node's HTTP parser refuses (oversized headers, bad framing, junk request
 * lines) with the error envelope instead of Node's default empty `400 Bad Request`. They never
 * reach Express, so this is the only place they can be answered; the connection is closed
 * because the parser cannot tell where the next request would start.
 */
export function attachClientErrorHandler(
  server: Server,
  timeouts: typeof TRANSPORT_TIMEOUTS = TRANSPORT_TIMEOUTS,
): void {
  // Node's defaults (60 s for headers, checked every 30 s) held a connection that never finished
  // its headers for over a minute. The checking interval is read when the server starts
  // listening: attach before that for it to count.
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    timeouts.checkEveryMs;
  requireHost(server);
  server.on(
    'clientError',
    function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex) {
      const code = error.code ?? '';
      if (GONE_CODES.has(code) || !socket.writable) {
        socket.destroy();
        return;
      }
      // A response already under way on this socket (keep-alive) must not get a second one
      // spliced into it; Node's own default handler makes the same check.
      const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })
        ._httpMessage;
      if (pending?.headersSent) {
        socket.destroy();
        return;
      }
      const tooLarge = TOO_LARGE_CODES.has(code);
      const status = tooLarge ? 431 : ERROR_STATUS.BAD_REQUEST;
      const failure = new ServiceError(
        'BAD_REQUEST',
        tooLarge ? PARSER_REFUSALS.tooLarge : PARSER_REFUSALS.malformed,
      );
      const requestId = randomUUID();
      const body = JSON.stringify(errorEnvelope(failure, requestId));
      const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${requestId}\r\n` +
          'Connection: close\r\n' +
          '\r\n' +
          body,
      );
    },
  );
}

/**
 * An HTTP/1.1 request without `Host` is a 400 with the envelope: Node's own check answers an
 * empty 400, so it is turned off and made here, in front of the application.
 */
function requireHost(server: Server): void {
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  const handlers = server.listeners('request') as Array<
    (req: IncomingMessage, res: ServerResponse) => void
  >;
  server.removeAllListeners('request');
  server.on('request', function hostRequired(req: IncomingMessage, res: ServerResponse) {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      const requestId = randomUUID();
      const failure = new ServiceError('BAD_REQUEST', 'The Host header is required', {
        host: ['is required in HTTP/1.1'],
      });
      const body = JSON.stringify(errorEnvelope(failure, requestId));
      res.writeHead(ERROR_STATUS.BAD_REQUEST, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'x-request-id': requestId,
        connection: 'close',
      });
      res.end(body);
      return;
    }
    for (const handler of handlers) handler.call(server, req, res);
  });
}

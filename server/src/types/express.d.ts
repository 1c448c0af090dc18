import type { AppRoute } from '@ts-rest/core';
import type { RequestAuth } from '../http/auth.js';

// Every field the server's middleware adds to Express's Request, in one place.
declare global {
  namespace Express {
    interface Request {
      /** Correlation id: echoed from a sane incoming x-request-id, or made here. */
      requestId: string;
      startedAt: bigint;
      /** Set when the handler already wrote this request's audit record (in its transaction). */
      auditRecorded?: boolean;
      auth?: RequestAuth;
      /** Set by ts-rest on contract routes. */
      tsRestRoute?: AppRoute;
      /** The exact bytes of a form body, kept for the callback's HMAC signature. */
      rawBody?: Buffer;
    }
  }
}

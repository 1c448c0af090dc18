import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request } from 'express';

/**
 * The HTTP request that carries the JSON-RPC messages being handled. The SDK calls tool handlers
 * from its own message loop, but inside the async context of `transport.handleRequest`, so the
 * request is found here rather than threaded through the SDK: its `x-request-id` keys learning
 * signals, its audit fields go into write transactions, and `auditRecorded` is set on it.
 */
const storage = new AsyncLocalStorage<Request>();

export function withHttpRequest<T>(req: Request, fn: () => T): T {
  return storage.run(req, fn);
}

export function currentHttpRequest(): Request | undefined {
  return storage.getStore();
}

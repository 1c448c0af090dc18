import { isIPv6 } from 'node:net';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import { ServiceError } from '../errors.js';
import { sendError } from './errors.js';

/** One counted request: how many the key has made in its current window, and when that ends. */
export interface RateLimitHit {
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/**
 * Where request counts live. In memory for one instance; a shared store (Redis) makes the limit
 * hold across instances. `hit` counts one request and reports the window's total so far.
 */
export interface RateLimitStore {
  hit(key: string, windowMs: number): Promise<RateLimitHit>;
}

/** Windows whose end passed are dropped once the map holds this many keys. */
const PRUNE_AT = 10_000;

/**
 * Fixed windows in process memory: each key's window starts at its first request. Cheap and
 * exact per instance; a client may make up to twice the limit across a window boundary, which is
 * the usual price of fixed windows.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      if (!window && this.windows.size >= PRUNE_AT) this.prune(now);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetMs: window.resetAt - now };
  }

  /** Keys currently tracked (tests, metrics). */
  get size(): number {
    return this.windows.size;
  }

  private prune(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

/**
 * The client a rate limit counts: the IP Express reports (`trust proxy` decides whether proxy
 * headers count), with IPv6 addresses folded to their /64, since one host usually owns a whole
 * /64 and could otherwise rotate through it.
 */
export function clientAddressKey(req: Pick<Request, 'ip' | 'socket'>): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice('::ffff:'.length);
  return isIPv6(ip) ? ipv6Prefix64(ip) : ip;
}

/** `2001:db8:1:2:3:4:5:6` and `2001:db8:1:2::9` → `2001:db8:1:2::/64`. */
export function ipv6Prefix64(ip: string): string {
  const address = ip.split('%')[0] ?? ip;
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = address.includes('::') && tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = address.includes('::')
    ? [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups]
    : headGroups;
  const prefix = groups.slice(0, 4).map((group) => (parseInt(group, 16) || 0).toString(16));
  return `${prefix.join(':')}::/64`;
}

export interface RateLimitOptions {
  store: RateLimitStore;
  /** Requests allowed per window. */
  limit: number;
  windowMs?: number;
  /** Namespaces the store's keys, so several limits can share one store. */
  name: string;
  /** Who is counted; defaults to the client address. */
  key?: (req: Request) => string;
  /** Says what was limited, in the 429 message. */
  describe?: string;
  logger?: Logger;
}

/**
 * 429 `RATE_LIMITED` with `Retry-After` (seconds) once a client passes `limit` requests in a
 * window; every counted response also carries `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset`. A store that fails lets the request through: a limiter outage must not take
 * the service down with it.
 */
export function rateLimit({
  store,
  limit,
  windowMs = 60_000,
  name,
  key = clientAddressKey,
  describe = `${limit} requests per ${Math.round(windowMs / 1000)} s`,
  logger,
}: RateLimitOptions): RequestHandler {
  return async function rateLimitMiddleware(req, res, next) {
    let hit: RateLimitHit;
    try {
      hit = await store.hit(`${name}:${key(req)}`, windowMs);
    } catch (err) {
      logger?.warn(
        { err, limit: name, request_id: req.requestId },
        'rate limit store failed; request allowed',
      );
      return next();
    }
    const resetSeconds = Math.max(1, Math.ceil(hit.resetMs / 1000));
    res.setHeader('RateLimit-Limit', String(limit));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, limit - hit.count)));
    res.setHeader('RateLimit-Reset', String(resetSeconds));
    if (hit.count <= limit) return next();
    sendError(
      req,
      res,
      new ServiceError(
        'RATE_LIMITED',
        `Rate limit exceeded: ${describe}; retry in ${resetSeconds} s`,
        undefined,
        {
          'Retry-After': String(resetSeconds),
        },
      ),
    );
  };
}

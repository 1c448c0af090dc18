import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterAbstract,
  type RateLimiterStoreAbstract,
} from 'rate-limiter-flexible';
import type { RedisConnection } from '../config.js';
import type { Logger } from '../logger.js';
import { openRedis } from './redis.js';

/** A limit store failure is logged at most this often per message, with how many it stands for. */
const STORE_WARNING_INTERVAL_MS = 10_000;
const storeWarnings = new Map<string, { at: number; suppressed: number }>();

/**
 * Logs a limit store failure, throttled: a stalled or down Redis fails every request's check, and
 * one line per request would flood the log (and cost the event loop) during the outage.
 */
export function warnStoreFailure(
  logger: Pick<Logger, 'warn'> | undefined,
  err: unknown,
  message: string,
  /** Context of the failure that is logged (one of those the line stands for). */
  fields: Record<string, unknown> = {},
): void {
  if (!logger) return;
  const now = Date.now();
  const last = storeWarnings.get(message);
  if (last && now - last.at < STORE_WARNING_INTERVAL_MS) {
    last.suppressed += 1;
    return;
  }
  storeWarnings.set(message, { at: now, suppressed: 0 });
  logger.warn({ ...fields, err, failures_since_last_warning: last?.suppressed ?? 0 }, message);
}

/** A fixed-window counter: rate-limiter-flexible's limiter, in memory or on Redis. */
export type Counter = RateLimiterAbstract | RateLimiterStoreAbstract;

export interface CounterSpec {
  /** Names the counter's keys, so several limits share one store. */
  name: string;
  /** Points allowed per window. */
  points: number;
  /** Window length in seconds; 0 never resets. */
  durationSeconds: number;
}

/** One held in-flight slot. */
export interface Lease {
  granted: boolean;
  /** Leases held for the key after this call (including this one when granted). */
  active: number;
  /** When refused: milliseconds until the oldest lease expires. */
  retryAfterMs: number;
  release(): Promise<void>;
}

/**
 * In-flight leases: at most `limit` per key, each expiring `ttlMs` after it was taken, so a crashed
 * request's slot comes back by itself. rate-limiter-flexible counts requests per window but has no
 * semaphore, hence this small store (a sorted set of lease expiries on Redis, a map in memory).
 */
export interface LeaseStore {
  acquire(key: string, limit: number, ttlMs: number): Promise<Lease>;
}

/**
 * Where limits count: process memory (one instance) or Redis (`REDIS_URL`: shared by every
 * instance, so N instances together admit exactly the limit).
 */
export interface LimitBackend {
  /** The counter for a spec; one instance per spec, reused. */
  counter(spec: CounterSpec): Counter;
  leases: LeaseStore;
  /** Readiness: the shared store answers (absent in memory: nothing to check). */
  ping?(): Promise<boolean>;
  close(): Promise<void>;
}

export interface LimitBackendOptions {
  /** `redis://…`; unset (and no `redis`) counts in memory. */
  redisUrl?: string | undefined;
  /** A URL or Sentinels (`REDIS_SENTINELS`); wins over `redisUrl`. */
  redis?: RedisConnection | undefined;
  /** Prefix of every Redis key (tests give each run its own). */
  keyPrefix?: string;
  now?: () => number;
  /** Told when the first connection to Redis fails. */
  onConnectError?: (error: unknown) => void;
  /**
   * How long one Redis command may take before it fails (and the limit check with it, which then
   * fails open or closed as its caller decides). Keep it well under the request deadline: see
   * {@link commandTimeoutFor}.
   */
  commandTimeoutMs?: number;
}

/** The command timeout when nothing bounds it more tightly. */
const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;

/**
 * A Redis command timeout for a request deadline: a quarter of it, at most a second, so a stalled
 * Redis costs a request a bounded slice of its time instead of all of it (a request meets up to
 * three limit checks in a row).
 */
export function commandTimeoutFor(requestDeadlineMs: number): number {
  if (requestDeadlineMs <= 0) return DEFAULT_COMMAND_TIMEOUT_MS;
  return Math.max(10, Math.min(DEFAULT_COMMAND_TIMEOUT_MS, Math.floor(requestDeadlineMs / 4)));
}

/**
 * Opens the backend. On Redis it waits for the first connection; if Redis is down then, the
 * backend still opens (limit checks fail until ioredis reconnects, and callers decide whether a
 * failed check lets the request through).
 */
export async function createLimitBackend({
  redisUrl,
  redis,
  keyPrefix = 'mnemo',
  now = Date.now,
  onConnectError,
  commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
}: LimitBackendOptions = {}): Promise<LimitBackend> {
  const connection = redis ?? (redisUrl ? { url: redisUrl } : undefined);
  if (!connection) return memoryBackend(keyPrefix, now);
  // No offline queue: a Redis outage fails the limit check at once (the caller decides whether
  // that fails open or closed) instead of holding requests until it returns.
  const client = openRedis(connection, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    // A stalled (not closed) Redis answers nothing: without this, every check waits for it.
    commandTimeout: commandTimeoutMs,
    lazyConnect: true,
  });
  client.on('error', () => {
    // Reported by the failing limit checks; without a listener ioredis prints to stderr.
  });
  await client.connect().catch((error: unknown) => onConnectError?.(error));
  return redisBackend(client, keyPrefix, now);
}

function cachedCounters(make: (spec: CounterSpec) => Counter): (spec: CounterSpec) => Counter {
  const counters = new Map<string, Counter>();
  return (spec) => {
    const id = `${spec.name}:${spec.points}:${spec.durationSeconds}`;
    let counter = counters.get(id);
    if (!counter) {
      counter = make(spec);
      counters.set(id, counter);
    }
    return counter;
  };
}

function memoryBackend(keyPrefix: string, now: () => number): LimitBackend {
  const leases = new Map<string, Map<number, number>>();
  // Lease ids need only be unique within this process.
  let lastLeaseId = 0;
  return {
    counter: cachedCounters(
      (spec) =>
        new RateLimiterMemory({
          keyPrefix: `${keyPrefix}:${spec.name}:${spec.points}`,
          points: spec.points,
          duration: spec.durationSeconds,
        }),
    ),
    leases: {
      async acquire(key, limit, ttlMs) {
        const at = now();
        let held = leases.get(key);
        if (!held) {
          held = new Map();
          leases.set(key, held);
        }
        for (const [id, expiresAt] of held) if (expiresAt <= at) held.delete(id);
        if (held.size >= limit) {
          const oldest = Math.min(...held.values());
          return refused(held.size, oldest - at);
        }
        const id = ++lastLeaseId;
        held.set(id, at + ttlMs);
        const slots = held;
        return {
          granted: true,
          active: held.size,
          retryAfterMs: 0,
          release: async () => {
            slots.delete(id);
            if (slots.size === 0 && leases.get(key) === slots) leases.delete(key);
          },
        };
      },
    },
    close: async () => {},
  };
}

/**
 * On Redis a held lease is kept alive by its instance: it expires LEASE_HEARTBEAT_TTL_MS after
 * the last heartbeat (one every LEASE_HEARTBEAT_MS), so the slots of an instance that died
 * (kill -9, lost host) come back within that bound, not after the request's own lease time. The
 * lease time still bounds a request that hangs on a live instance: its heartbeats stop then.
 */
export const LEASE_HEARTBEAT_MS = 1_000;
export const LEASE_HEARTBEAT_TTL_MS = 3_000;

/**
 * Drops expired leases, then adds one if fewer than the limit are held. Returns
 * {granted (0/1), held after the call, ms until the oldest expires}.
 */
const ACQUIRE_LEASE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, held, tonumber(oldest[2]) - tonumber(ARGV[1])}
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, held + 1, 0}
`;

/** The lease script as a command of the client: sent by its SHA (EVALSHA), not its text. */
type LeaseClient = Redis & {
  acquireLease(
    key: string,
    now: number,
    ttlMs: number,
    limit: number,
    id: string,
  ): Promise<[number, number, number]>;
};

/** This instance's held leases on Redis, refreshed together by one timer. */
class LeaseHeartbeat {
  private readonly held = new Map<string, { redisKey: string; until: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Redis,
    private readonly now: () => number,
  ) {}

  hold(id: string, redisKey: string, ttlMs: number): void {
    this.held.set(id, { redisKey, until: this.now() + ttlMs });
    if (!this.timer) {
      this.timer = setInterval(() => this.beat(), LEASE_HEARTBEAT_MS);
      this.timer.unref();
    }
  }

  drop(id: string): void {
    this.held.delete(id);
    if (this.held.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private beat(): void {
    const at = this.now();
    const batch = this.client.pipeline();
    for (const [id, lease] of this.held) {
      // Past its own lease time a lease is left to expire (a hung request).
      if (lease.until <= at) {
        this.held.delete(id);
        continue;
      }
      // XX: only a lease still held is extended (one removed by expiry stays gone).
      batch.zadd(lease.redisKey, 'XX', at + LEASE_HEARTBEAT_TTL_MS, id);
      batch.pexpire(lease.redisKey, LEASE_HEARTBEAT_TTL_MS);
    }
    if (this.held.size === 0) this.stop();
    // A missed beat is made up by the next; a Redis outage fails the limit checks themselves.
    if (batch.length > 0) batch.exec().catch(() => undefined);
  }
}

function redisBackend(client: Redis, keyPrefix: string, now: () => number): LimitBackend {
  client.defineCommand('acquireLease', { numberOfKeys: 1, lua: ACQUIRE_LEASE });
  const leaseClient = client as LeaseClient;
  const heartbeat = new LeaseHeartbeat(client, now);
  return {
    counter: cachedCounters(
      (spec) =>
        new RateLimiterRedis({
          storeClient: client,
          keyPrefix: `${keyPrefix}:${spec.name}:${spec.points}`,
          points: spec.points,
          duration: spec.durationSeconds,
          rejectIfRedisNotReady: true,
        }),
    ),
    leases: {
      async acquire(key, limit, ttlMs) {
        const redisKey = `${keyPrefix}:lease:${key}`;
        const id = randomUUID();
        const [granted, held, retryAfterMs] = await leaseClient.acquireLease(
          redisKey,
          now(),
          Math.min(ttlMs, LEASE_HEARTBEAT_TTL_MS),
          limit,
          id,
        );
        if (!granted) return refused(held, retryAfterMs);
        heartbeat.hold(id, redisKey, ttlMs);
        return {
          granted: true,
          active: held,
          retryAfterMs: 0,
          release: async () => {
            heartbeat.drop(id);
            await client.zrem(redisKey, id);
          },
        };
      },
    },
    ping: async () => (await client.ping()) === 'PONG',
    close: async () => {
      heartbeat.stop();
      client.disconnect();
    },
  };
}

function refused(active: number, retryAfterMs: number): Lease {
  return {
    granted: false,
    active,
    retryAfterMs: Math.max(0, retryAfterMs),
    release: async () => {},
  };
}

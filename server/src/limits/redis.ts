import { Redis, type RedisOptions } from 'ioredis';
import type { RedisConnection } from '../config.js';

/**
 * A Redis client for `REDIS_URL`, or for the master the Sentinels of `REDIS_SENTINELS` name
 * (`REDIS_SENTINEL_NAME`). Through Sentinel, ioredis asks the Sentinels where the master is at
 * each (re)connect and listens for their `+switch-master` announcements, so after a failover the
 * client reconnects to the promoted replica by itself: commands fail while there is no master,
 * then work again (docs/scaling.md).
 */
export function openRedis(connection: RedisConnection, options: RedisOptions): Redis {
  if ('url' in connection && !('sentinels' in connection))
    return new Redis(connection.url, options);
  const credentials = connection.url ? credentialsOf(connection.url) : {};
  return new Redis({
    ...options,
    ...credentials,
    sentinels: connection.sentinels,
    name: connection.name,
    // Reconnect at once on the Sentinels' failover announcement, not at the next failed command.
    failoverDetector: true,
    // Sentinels that stop answering are tried in turn; give each a bounded time.
    sentinelCommandTimeout: 1_000,
    // While the Sentinels still point at a dead master, retry often: the promotion takes seconds.
    sentinelRetryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
    retryStrategy: (attempt) => Math.min(50 * attempt, 500),
  });
}

/** The password, user and database of a `redis://` URL: with Sentinel they apply to the master. */
function credentialsOf(url: string): Pick<RedisOptions, 'username' | 'password' | 'db'> {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.slice(1));
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
  };
}

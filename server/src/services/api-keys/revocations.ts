import { Redis } from 'ioredis';

/**
 * Tells every instance that an API key was revoked, so each drops it from its verified-key cache
 * at once instead of trusting it until the cache entry expires (AUTH_CACHE_TTL_MS). On Redis
 * (`REDIS_URL`): a pub/sub channel. A message lost while an instance was disconnected from Redis
 * is covered by dropping that instance's whole cache once its subscription is back; see
 * docs/scaling.md.
 */
export interface RevocationChannel {
  /** Announces a revoked key to every instance (this one included). */
  publish(apiKeyId: string): Promise<void>;
  /**
   * `forget` is called with every key id any instance revokes; `forgetAll` when revocations may
   * have been missed (the subscription was lost and is back).
   */
  subscribe(forget: (apiKeyId: string) => void, forgetAll: () => void): Promise<void>;
  close(): Promise<void>;
}

/** One instance: nothing to tell (the revoking instance forgets the key itself). */
export const localRevocations: RevocationChannel = {
  publish: async () => {},
  subscribe: async () => {},
  close: async () => {},
};

const CONNECTION = {
  connectTimeout: 2_000,
  maxRetriesPerRequest: 1,
  lazyConnect: true,
} as const;

/** Revocations over Redis pub/sub: one publishing and one subscribed connection per instance. */
export function redisRevocations(
  redisUrl: string,
  {
    channel = 'mnemo:api-key-revoked',
    connectionName = 'mnemo-revocations',
    onError,
  }: { channel?: string; connectionName?: string; onError?: (err: unknown) => void } = {},
): RevocationChannel {
  const publisher = new Redis(redisUrl, { ...CONNECTION, enableOfflineQueue: false });
  // The subscription waits for Redis however long it is down, and is renewed after every
  // reconnect (ioredis' autoResubscribe).
  const subscriber = new Redis(redisUrl, {
    connectTimeout: 2_000,
    maxRetriesPerRequest: null,
    connectionName,
  });
  // Failures are reported by the callers (publish) or ridden out (the subscription reconnects).
  publisher.on('error', () => {});
  subscriber.on('error', () => {});
  return {
    async publish(apiKeyId) {
      await publisher.publish(channel, apiKeyId);
    },
    async subscribe(forget, forgetAll) {
      subscriber.on('message', (from: string, message: string) => {
        if (from === channel) forget(message);
      });
      // Every (re)connection: messages published while the connection was down are lost, so
      // once the subscription is live again (this SUBSCRIBE is answered after ioredis' own
      // resubscription) nothing cached before it is trusted.
      subscriber.on('ready', () => {
        subscriber
          .subscribe(channel)
          .then(() => forgetAll())
          .catch(() => {});
      });
      const subscribed = subscriber.subscribe(channel).catch((err: unknown) => onError?.(err));
      await publisher.connect().catch((err: unknown) => onError?.(err));
      // Redis down at start: the start goes on; the subscription completes when it is back.
      await Promise.race([
        subscribed,
        new Promise((resolve) => setTimeout(resolve, 2_000).unref()),
      ]);
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

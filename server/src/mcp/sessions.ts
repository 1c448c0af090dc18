import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';

/** The workspace (and key) a session was opened with; every call in it acts for that workspace. */
export interface SessionBinding {
  workspaceId: string;
  apiKeyId: string | null;
}

/** Something serving one HTTP request of a session (an SDK transport and its server). */
export interface OpenStream {
  close(): Promise<void>;
}

export interface McpSessionStoreOptions {
  /** A session with no request for this long is gone. */
  ttlMs: number;
  /** In memory: open sessions at most, opening one more forgets the least recently used. */
  maxSessions: number;
  logger: Logger;
  /**
   * Keep sessions in Redis, shared by every instance (`REDIS_URL` or Sentinel): a session opened
   * on one instance is found on any other. Unset: in this process's memory.
   */
  redis?: Redis | undefined;
  /** Prefix of the Redis keys. */
  keyPrefix?: string;
  now?: () => number;
}

/** Where the session records live: this process, or Redis for every instance. */
interface SessionRecords {
  put(id: string, binding: SessionBinding): Promise<void>;
  /** The binding of a live session, its idle time restarted; undefined when unknown or expired. */
  touch(id: string): Promise<SessionBinding | undefined>;
  remove(id: string): Promise<void>;
  readonly size: number | undefined;
  close(): Promise<void>;
}

/**
 * The hosted MCP door's sessions. A session is only a record: its id and the workspace and key
 * that opened it. No per-session state lives in a process: every HTTP request is served by a
 * fresh SDK server over a stateless transport (Mnemo's tools keep nothing between calls), so any
 * instance behind a load balancer can serve any request of a session, once the record says the
 * caller owns it. With Redis configured, the records are shared by every instance; in memory, a
 * session is known to the instance that opened it only (docs/scaling.md).
 */
export class McpSessionStore {
  private readonly records: SessionRecords;
  private readonly streams = new Set<OpenStream>();

  constructor(private readonly options: McpSessionStoreOptions) {
    this.records = options.redis
      ? redisRecords(options.redis, options.keyPrefix ?? 'mnemo', options.ttlMs)
      : new MemoryRecords(options);
  }

  /** Sessions open in this process's memory; undefined when they live in Redis. */
  get size(): number | undefined {
    return this.records.size;
  }

  /** Opens a session for the caller; returns its id. */
  async open(binding: SessionBinding): Promise<string> {
    const id = randomUUID();
    await this.records.put(id, binding);
    return id;
  }

  /**
   * Whether `id` is a live session opened by this caller's workspace and key (its idle time
   * restarts). A session of another workspace answers exactly like a missing one.
   */
  async find(id: string, caller: SessionBinding): Promise<boolean> {
    const binding = await this.records.touch(id);
    return (
      binding !== undefined &&
      binding.workspaceId === caller.workspaceId &&
      binding.apiKeyId === caller.apiKeyId
    );
  }

  /** Ends the caller's session (DELETE); false when it is not theirs or not live. */
  async close(id: string, caller: SessionBinding): Promise<boolean> {
    if (!(await this.find(id, caller))) return false;
    await this.records.remove(id);
    return true;
  }

  /** Counts a request's stream as open until the returned function is called. */
  track(stream: OpenStream): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  /** Shutdown: ends the streams this process serves (their requests finish) and lets go of Redis. */
  async closeAll(): Promise<void> {
    const open = [...this.streams];
    this.streams.clear();
    await Promise.all(
      open.map((stream) =>
        stream.close().catch((err: unknown) => {
          this.options.logger.warn({ err }, 'closing an MCP stream failed');
        }),
      ),
    );
    await this.records.close();
  }
}

/** Records in this process, bounded by count (least recently used first out) and idle time. */
class MemoryRecords implements SessionRecords {
  private readonly sessions = new Map<string, { binding: SessionBinding; lastSeenAt: number }>();
  private readonly now: () => number;

  constructor(private readonly options: McpSessionStoreOptions) {
    this.now = options.now ?? (() => Date.now());
  }

  get size(): number {
    return this.sessions.size;
  }

  async put(id: string, binding: SessionBinding): Promise<void> {
    const now = this.now();
    for (const [known, session] of this.sessions)
      if (now - session.lastSeenAt > this.options.ttlMs) this.sessions.delete(known);
    while (this.sessions.size >= this.options.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.options.logger.info(
        { session_id: oldest, max_sessions: this.options.maxSessions },
        'MCP session limit reached; the least recently used session is closed',
      );
      this.sessions.delete(oldest);
    }
    this.sessions.set(id, { binding, lastSeenAt: now });
  }

  async touch(id: string): Promise<SessionBinding | undefined> {
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    this.sessions.delete(id);
    if (now - session.lastSeenAt > this.options.ttlMs) return undefined;
    session.lastSeenAt = now;
    // Re-inserted: the map stays in least-recently-used order for eviction.
    this.sessions.set(id, session);
    return session.binding;
  }

  async remove(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  async close(): Promise<void> {
    this.sessions.clear();
  }
}

/** Records in Redis: one key per session, expiring after the idle time, renewed by each use. */
function redisRecords(redis: Redis, keyPrefix: string, ttlMs: number): SessionRecords {
  const key = (id: string) => `${keyPrefix}:mcp-session:${id}`;
  return {
    size: undefined,
    async put(id, binding) {
      await unavailableWithout(redis.set(key(id), JSON.stringify(binding), 'PX', ttlMs));
    },
    async touch(id) {
      // GETEX: read and renew in one command (Redis 6.2+).
      const stored = await unavailableWithout(redis.getex(key(id), 'PX', ttlMs));
      return stored ? (JSON.parse(stored) as SessionBinding) : undefined;
    },
    async remove(id) {
      await unavailableWithout(redis.del(key(id)));
    },
    async close() {
      redis.disconnect();
    },
  };
}

/**
 * Redis out of reach (down, failing over): 503 with Retry-After, which an MCP client retries,
 * rather than a 500 or a "session not found" that would make it open a new session.
 */
async function unavailableWithout<T>(command: Promise<T>): Promise<T> {
  try {
    return await command;
  } catch {
    throw new ServiceError(
      'SERVICE_UNAVAILABLE',
      'MCP sessions are unavailable for a moment; retry shortly',
      undefined,
      { 'Retry-After': '1' },
    );
  }
}

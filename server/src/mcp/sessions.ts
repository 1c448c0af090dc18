import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from '../logger.js';

/** The workspace (and key) a session was opened with; every call in it acts for that workspace. */
export interface SessionBinding {
  workspaceId: string;
  apiKeyId: string | null;
}

export interface McpSession {
  id: string;
  /** The workspace and key that initialized it: no other may use it. */
  binding: SessionBinding;
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastSeenAt: number;
  /** HTTP requests in progress; an open GET event stream counts until it closes. */
  inflight: number;
}

export interface McpSessionStoreOptions {
  /** A session with no request in progress and none for this long is closed. */
  ttlMs: number;
  /** Open sessions at most: opening one more closes the least recently used. */
  maxSessions: number;
  logger: Logger;
  now?: () => number;
}

/**
 * The open MCP sessions of this instance. Sessions live in memory (the SDK's transport holds
 * open streams), so with several instances a client must keep reaching the one that opened its
 * session; one it does not know answers 404, and an MCP client then initializes a new session.
 */
export class McpSessionStore {
  private readonly sessions = new Map<string, McpSession>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: McpSessionStoreOptions) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * The session, when it exists and was opened by this caller's workspace and key. A session of
   * another workspace is reported exactly like a missing one: its id reveals nothing.
   */
  find(id: string, caller: SessionBinding): McpSession | undefined {
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (
      session.binding.workspaceId !== caller.workspaceId ||
      session.binding.apiKeyId !== caller.apiKeyId
    ) {
      return undefined;
    }
    return session;
  }

  add(session: McpSession): void {
    if (this.sessions.size >= this.options.maxSessions) this.sweep();
    while (this.sessions.size >= this.options.maxSessions) {
      const oldest = this.sessions.values().next().value;
      if (!oldest) break;
      this.options.logger.info(
        { session_id: oldest.id, max_sessions: this.options.maxSessions },
        'MCP session limit reached; closing the least recently used session',
      );
      void this.close(oldest.id);
    }
    session.lastSeenAt = this.now();
    this.sessions.set(session.id, session);
    this.sweeper ??= setInterval(() => this.sweep(), Math.min(this.options.ttlMs, 60_000)).unref();
  }

  /** Marks a request on the session as started; call the returned function when it ends. */
  begin(session: McpSession): () => void {
    session.inflight += 1;
    session.lastSeenAt = this.now();
    // Re-inserting keeps the map in least-recently-used order for eviction.
    if (this.sessions.delete(session.id)) this.sessions.set(session.id, session);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      session.inflight -= 1;
      session.lastSeenAt = this.now();
    };
  }

  /** Forgets the session (its transport closed, e.g. after DELETE) without closing it again. */
  forget(id: string): void {
    this.sessions.delete(id);
  }

  async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    try {
      await session.server.close();
    } catch (err) {
      this.options.logger.warn({ err, session_id: id }, 'closing an MCP session failed');
    }
  }

  /** Closes sessions idle longer than the TTL; returns how many. */
  sweep(now = this.now()): number {
    let closed = 0;
    for (const session of [...this.sessions.values()]) {
      if (session.inflight === 0 && now - session.lastSeenAt > this.options.ttlMs) {
        void this.close(session.id);
        closed += 1;
      }
    }
    if (closed > 0)
      this.options.logger.debug({ closed, open: this.sessions.size }, 'idle MCP sessions closed');
    return closed;
  }

  /** Shutdown: closes every session, which ends their open event streams. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }
}

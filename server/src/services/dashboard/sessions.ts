import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../../db/client.js';
import {
  deleteExpiredSessions,
  deleteSessionByTokenHash,
  findLiveSession,
  insertDashboardSession,
} from '../../db/queries/dashboard.js';

/** What a valid session cookie stands for. */
export interface SessionContext {
  sessionId: string;
  userId: string;
  workspaceId: string;
  expiresAt: Date;
  csrfHash: string;
}

export interface OpenedSession {
  /** Cookie value: shown to the browser only; the database keeps its hash. */
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

const digest = (value: string) => createHash('sha256').update(value).digest('hex');

/** Dashboard sessions: random secrets in cookies, SHA-256 hashes in the database. */
export class DashboardSessions {
  constructor(
    private readonly db: Database,
    private readonly ttlMs: number,
  ) {}

  async open(input: { userId: string; workspaceId: string }): Promise<OpenedSession> {
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.ttlMs);
    await insertDashboardSession(this.db, {
      tokenHash: digest(token),
      csrfHash: digest(csrfToken),
      userId: input.userId,
      workspaceId: input.workspaceId,
      expiresAt,
    });
    return { token, csrfToken, expiresAt };
  }

  /** The live session of a cookie value; undefined when unknown or expired. */
  async authenticate(token: string): Promise<SessionContext | undefined> {
    if (token.length === 0 || token.length > 200) return undefined;
    const row = await findLiveSession(this.db, digest(token));
    if (!row) return undefined;
    return {
      sessionId: row.id,
      userId: row.userId,
      workspaceId: row.workspaceId,
      expiresAt: row.expiresAt,
      csrfHash: row.csrfHash,
    };
  }

  /** Constant-time check of a presented CSRF token against the session's. */
  static csrfMatches(session: SessionContext, presented: string | undefined): boolean {
    if (!presented) return false;
    const expected = Buffer.from(session.csrfHash, 'hex');
    const actual = Buffer.from(digest(presented), 'hex');
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }

  async close(token: string): Promise<void> {
    await deleteSessionByTokenHash(this.db, digest(token));
  }

  /** Deletes expired sessions (POST /admin/sessions/cleanup). */
  cleanup(now?: Date): Promise<number> {
    return deleteExpiredSessions(this.db, now);
  }
}

import type { Reader, Writer } from '../client.js';
import {
  and,
  asc,
  count,
  desc,
  eq,
  gt,
  gte,
  inArray,
  isNotNull,
  isNull,
  lte,
  sql,
} from 'drizzle-orm';
import { lostAnswer } from '../faults.js';
import {
  type ApiKey,
  apiKeys,
  auditLog,
  type DashboardSession,
  dashboardSessions,
  memories,
  type Workspace,
  type WorkspaceMember,
  workspaceMembers,
  workspaces,
} from '../schema/index.js';

export type MemberWorkspace = Workspace & { role: WorkspaceMember['role'] };

/** The user's workspaces, oldest membership first. */
export async function listMemberWorkspaces(db: Reader, userId: string): Promise<MemberWorkspace[]> {
  const rows = await db
    .select({ workspace: workspaces, role: workspaceMembers.role })
    .from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(eq(workspaceMembers.userId, userId))
    .orderBy(asc(workspaceMembers.createdAt), asc(workspaces.id));
  return rows.map((row) => ({ ...row.workspace, role: row.role }));
}

export async function findMembership(
  db: Reader,
  userId: string,
  workspaceId: string,
): Promise<MemberWorkspace | undefined> {
  const [row] = await db
    .select({ workspace: workspaces, role: workspaceMembers.role })
    .from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(and(eq(workspaceMembers.userId, userId), eq(workspaceMembers.workspaceId, workspaceId)))
    .limit(1);
  return row ? { ...row.workspace, role: row.role } : undefined;
}

/** Advisory lock of one user's workspace creation: bootstrap and creation take it in turn. */
const ownerLock = (userId: string) =>
  sql`select pg_advisory_xact_lock(hashtextextended(${'workspace-bootstrap:' + userId}, 0))`;

/** Unrevoked keys of a workspace. */
export async function countLiveApiKeys(db: Reader, workspaceId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(apiKeys)
    .where(and(eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt)));
  return row?.n ?? 0;
}

/**
 * A workspace and its owner membership, in one transaction; with `maxOwned`, undefined when the
 * user owns that many already (counted under the user's lock, so racing requests cannot pass it).
 */
export async function createOwnedWorkspace(
  db: Writer,
  input: { name: string; userId: string; maxOwned: number },
): Promise<MemberWorkspace | undefined>;
export async function createOwnedWorkspace(
  db: Writer,
  input: { name: string; userId: string },
): Promise<MemberWorkspace>;
export async function createOwnedWorkspace(
  db: Writer,
  input: { name: string; userId: string; maxOwned?: number },
): Promise<MemberWorkspace | undefined> {
  return db.transaction(async (tx) => {
    if (input.maxOwned !== undefined) {
      await tx.execute(ownerLock(input.userId));
      const [owned] = await tx
        .select({ n: count() })
        .from(workspaceMembers)
        .where(and(eq(workspaceMembers.userId, input.userId), eq(workspaceMembers.role, 'owner')));
      if ((owned?.n ?? 0) >= input.maxOwned) return undefined;
    }
    const [workspace] = await tx.insert(workspaces).values({ name: input.name }).returning();
    if (!workspace) throw lostAnswer('insert into workspaces');
    await tx
      .insert(workspaceMembers)
      .values({ workspaceId: workspace.id, userId: input.userId, role: 'owner' });
    return { ...workspace, role: 'owner' as const };
  });
}

/**
 * The user's first workspace, or a new one they own if they have none, one at a time per user:
 * concurrent first sign-ins of one user make one workspace. The transaction takes an advisory
 * lock on the user id, then looks again, so the second sees the first's workspace.
 */
export async function firstOrNewOwnedWorkspace(
  db: Writer,
  input: { name: string; userId: string },
): Promise<{ workspace: MemberWorkspace; created: boolean }> {
  return db.transaction(async (tx) => {
    await tx.execute(ownerLock(input.userId));
    const [existing] = await listMemberWorkspaces(tx, input.userId);
    if (existing) return { workspace: existing, created: false };
    const [workspace] = await tx.insert(workspaces).values({ name: input.name }).returning();
    if (!workspace) throw lostAnswer('insert into workspaces');
    await tx
      .insert(workspaceMembers)
      .values({ workspaceId: workspace.id, userId: input.userId, role: 'owner' });
    return { workspace: { ...workspace, role: 'owner' as const }, created: true };
  });
}

/** Makes the user a member (idempotent: an existing membership keeps its role). */
export async function ensureMembership(
  db: Writer,
  input: { workspaceId: string; userId: string; role: WorkspaceMember['role'] },
): Promise<void> {
  await db.insert(workspaceMembers).values(input).onConflictDoNothing();
}

export async function insertDashboardSession(
  db: Writer,
  input: {
    tokenHash: string;
    csrfHash: string;
    userId: string;
    workspaceId: string;
    expiresAt: Date;
  },
): Promise<DashboardSession> {
  const [row] = await db.insert(dashboardSessions).values(input).returning();
  if (!row) throw lostAnswer('insert into dashboard_sessions');
  return row;
}

/** The unexpired session with this token hash. */
export async function findLiveSession(
  db: Reader,
  tokenHash: string,
): Promise<DashboardSession | undefined> {
  const [row] = await db
    .select()
    .from(dashboardSessions)
    .where(
      and(eq(dashboardSessions.tokenHash, tokenHash), gt(dashboardSessions.expiresAt, sql`now()`)),
    )
    .limit(1);
  return row;
}

export async function deleteSessionByTokenHash(db: Writer, tokenHash: string): Promise<void> {
  await db.delete(dashboardSessions).where(eq(dashboardSessions.tokenHash, tokenHash));
}

/** Deletes sessions whose expiry has passed; returns how many. */
export async function deleteExpiredSessions(db: Writer, now: Date = new Date()): Promise<number> {
  const rows = await db
    .delete(dashboardSessions)
    .where(lte(dashboardSessions.expiresAt, now))
    .returning({ id: dashboardSessions.id });
  return rows.length;
}

export async function listWorkspaceApiKeys(db: Reader, workspaceId: string): Promise<ApiKey[]> {
  return db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.workspaceId, workspaceId))
    .orderBy(desc(apiKeys.createdAt), asc(apiKeys.id));
}

export async function getApiKeyById(db: Reader, id: string): Promise<ApiKey | undefined> {
  const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id)).limit(1);
  return row;
}

/** Revokes the key if it belongs to the workspace (a second revoke keeps the first time). */
export async function revokeWorkspaceApiKey(
  db: Writer,
  workspaceId: string,
  id: string,
): Promise<ApiKey | undefined> {
  await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(
      and(eq(apiKeys.id, id), eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt)),
    );
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.workspaceId, workspaceId)))
    .limit(1);
  return row;
}

export interface WorkspaceCounts {
  memories: { total: number; active: number; replaced: number; archived: number };
  apiKeys: { active: number; revoked: number };
  requests24h: number;
}

export async function workspaceCounts(db: Reader, workspaceId: string): Promise<WorkspaceCounts> {
  const [states, keys, requests] = await Promise.all([
    db
      .select({ state: memories.lifecycleState, n: count() })
      .from(memories)
      .where(eq(memories.workspaceId, workspaceId))
      .groupBy(memories.lifecycleState),
    db
      .select({ revoked: isNotNull(apiKeys.revokedAt).mapWith(Boolean), n: count() })
      .from(apiKeys)
      .where(eq(apiKeys.workspaceId, workspaceId))
      .groupBy(isNotNull(apiKeys.revokedAt)),
    db
      .select({ n: count() })
      .from(auditLog)
      .where(
        and(
          eq(auditLog.workspaceId, workspaceId),
          gte(auditLog.createdAt, sql`now() - interval '24 hours'`),
        ),
      ),
  ]);
  const state = (name: string) => states.find((row) => row.state === name)?.n ?? 0;
  return {
    memories: {
      total: states.reduce((sum, row) => sum + row.n, 0),
      active: state('active'),
      replaced: state('replaced'),
      archived: state('archived'),
    },
    apiKeys: {
      active: keys.find((row) => !row.revoked)?.n ?? 0,
      revoked: keys.find((row) => row.revoked)?.n ?? 0,
    },
    requests24h: requests[0]?.n ?? 0,
  };
}

/**
 * How many workspaces the owner of this one owns (this one included); 0 for a workspace no
 * dashboard user owns (the bootstrap workspace, one made by an operator).
 */
export async function workspacesOfItsOwner(db: Reader, workspaceId: string): Promise<number> {
  const mine = db
    .select({ userId: workspaceMembers.userId })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.role, 'owner')));
  const [row] = await db
    .select({ n: sql<number>`count(distinct ${workspaceMembers.workspaceId})::int` })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.role, 'owner'), inArray(workspaceMembers.userId, mine)));
  return Number(row?.n ?? 0);
}

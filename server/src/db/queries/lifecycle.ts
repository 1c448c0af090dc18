import type { Reader } from '../client.js';
import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import { memories, memoryChunks, type NewMemory, type NewMemoryChunk } from '../schema/index.js';
import type { Queryable } from './statement.js';

// Re-exported: the lifecycle rules (services/lifecycle/decide.ts) import it from here.
export type { ClaimHolder } from './claims.js';

/**
 * Archives these memories by the expiry rule, those still live when it runs (a concurrent write
 * or run may have changed one since it was read); returns the ids it archived.
 */
export async function archiveExpired(db: Queryable, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(memories)
    .set({ lifecycleState: 'archived', archiveRule: 'expiry', updatedAt: new Date() })
    .where(and(inArray(memories.id, ids), eq(memories.lifecycleState, 'active')))
    .returning({ id: memories.id });
  return rows.map((row) => row.id);
}

/**
 * Marks these memories replaced by `keptId`, those still live when it runs; returns the ids it
 * changed.
 */
export async function supersedeBy(db: Queryable, keptId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(memories)
    .set({ lifecycleState: 'replaced', replacedByMemoryId: keptId, updatedAt: new Date() })
    .where(and(inArray(memories.id, ids), eq(memories.lifecycleState, 'active')))
    .returning({ id: memories.id });
  return rows.map((row) => row.id);
}

/** Evolution merge: the memory takes the refined text, fields and chunks; its id stays. */
export async function rewriteMemory(
  db: Queryable,
  id: string,
  fields: Partial<NewMemory>,
  chunks: Array<Omit<NewMemoryChunk, 'memoryId'>>,
): Promise<void> {
  await db
    .update(memories)
    .set({ ...fields, updatedAt: new Date() })
    .where(eq(memories.id, id));
  await db.delete(memoryChunks).where(eq(memoryChunks.memoryId, id));
  if (chunks.length > 0)
    await db.insert(memoryChunks).values(chunks.map((chunk) => ({ ...chunk, memoryId: id })));
}

export interface ExpiredMemory {
  id: string;
  workspaceId: string;
  expiresAt: Date | null;
}

/** Live memories whose `expires_at` has passed, oldest first, the page after `after`. */
export async function findExpired(
  db: Reader,
  {
    workspaceId,
    limit,
    now = new Date(),
    after,
  }: { workspaceId?: string; limit: number; now?: Date; after?: ExpiredMemory },
): Promise<ExpiredMemory[]> {
  return db
    .select({ id: memories.id, workspaceId: memories.workspaceId, expiresAt: memories.expiresAt })
    .from(memories)
    .where(
      and(
        eq(memories.lifecycleState, 'active'),
        isNotNull(memories.expiresAt),
        lte(memories.expiresAt, now),
        workspaceId ? eq(memories.workspaceId, workspaceId) : undefined,
        after?.expiresAt
          ? sql`(${memories.expiresAt}, ${memories.id}) > (${after.expiresAt.toISOString()}::timestamptz, ${after.id}::uuid)`
          : undefined,
      ),
    )
    .orderBy(asc(memories.expiresAt), asc(memories.id))
    .limit(limit);
}

export interface DuplicateCandidate {
  id: string;
  workspaceId: string;
  ownerId: string;
  ownerType: string;
  scope: string | null;
  namespace: string | null;
  containerTag: string | null;
  text: string;
  contentHash: string;
  createdAt: Date;
}

/**
 * Live, unexpired memories in the order of the owner index (workspace, owner, oldest first), the
 * page after `after`: the hygiene pass reads them a page at a time and compares within each
 * space. One owner's memories are consecutive, so a space never spans two owners' stretches.
 */
export async function liveMemoriesPage(
  db: Reader,
  {
    workspaceId,
    limit,
    now = new Date(),
    after,
  }: { workspaceId?: string; limit: number; now?: Date; after?: DuplicateCandidate },
): Promise<DuplicateCandidate[]> {
  return db
    .select({
      id: memories.id,
      workspaceId: memories.workspaceId,
      ownerId: memories.ownerId,
      ownerType: memories.ownerType,
      scope: memories.scope,
      namespace: memories.namespace,
      containerTag: memories.containerTag,
      text: memories.text,
      contentHash: memories.contentHash,
      createdAt: memories.createdAt,
    })
    .from(memories)
    .where(
      and(
        eq(memories.lifecycleState, 'active'),
        or(isNull(memories.expiresAt), gt(memories.expiresAt, now)),
        workspaceId ? eq(memories.workspaceId, workspaceId) : undefined,
        after
          ? sql`(${memories.workspaceId}, ${memories.ownerType}, ${memories.ownerId}, ${memories.createdAt}, ${memories.id}) > (${after.workspaceId}::uuid, ${after.ownerType}, ${after.ownerId}, ${after.createdAt.toISOString()}::timestamptz, ${after.id}::uuid)`
          : undefined,
      ),
    )
    .orderBy(
      asc(memories.workspaceId),
      asc(memories.ownerType),
      asc(memories.ownerId),
      asc(memories.createdAt),
      asc(memories.id),
    )
    .limit(limit);
}

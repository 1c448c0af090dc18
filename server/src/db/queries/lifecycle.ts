import type { Reader } from '../client.js';
import { and, asc, eq, isNotNull, lte } from 'drizzle-orm';
import { memories, memoryChunks, type NewMemory, type NewMemoryChunk } from '../schema/index.js';
import type { Queryable } from './statement.js';

// Re-exported: the lifecycle rules (services/lifecycle/decide.ts) import it from here.
export type { ClaimHolder } from './claims.js';

/** `change`: replaced by a memory, or archived by a lifecycle rule. */
export async function markMemoryState(
  db: Queryable,
  id: string,
  change: { state: 'replaced'; replacedBy: string } | { state: 'archived'; rule: 'expiry' },
): Promise<void> {
  await db
    .update(memories)
    .set({
      lifecycleState: change.state,
      ...(change.state === 'replaced'
        ? { replacedByMemoryId: change.replacedBy }
        : { archiveRule: change.rule }),
      updatedAt: new Date(),
    })
    .where(eq(memories.id, id));
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

/** Live memories whose `expires_at` has passed (oldest first). */
export async function findExpired(
  db: Reader,
  { workspaceId, limit, now = new Date() }: { workspaceId?: string; limit: number; now?: Date },
): Promise<Array<{ id: string; workspaceId: string; expiresAt: Date | null }>> {
  return db
    .select({ id: memories.id, workspaceId: memories.workspaceId, expiresAt: memories.expiresAt })
    .from(memories)
    .where(
      and(
        eq(memories.lifecycleState, 'active'),
        isNotNull(memories.expiresAt),
        lte(memories.expiresAt, now),
        workspaceId ? eq(memories.workspaceId, workspaceId) : undefined,
      ),
    )
    .orderBy(asc(memories.expiresAt))
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
 * Live memories of the spaces that hold more than one live memory, oldest first, for the
 * hygiene pass to compare within each space.
 */
export async function liveMemoriesOfCrowdedSpaces(
  db: Reader,
  { workspaceId, limit }: { workspaceId?: string; limit: number },
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
        workspaceId ? eq(memories.workspaceId, workspaceId) : undefined,
      ),
    )
    .orderBy(
      asc(memories.workspaceId),
      asc(memories.ownerType),
      asc(memories.ownerId),
      asc(memories.createdAt),
    )
    .limit(limit);
}

import type { Reader } from '../client.js';
import { and, asc, eq, inArray, or } from 'drizzle-orm';
import { memories, memoryLinks, type MemoryLink } from '../schema/index.js';
import { DatabaseError } from '../../errors.js';
import type { Queryable } from './statement.js';

/** What the link and pin routes check of a memory: whose it is and whether it is live. */
export interface MemoryHead {
  id: string;
  ownerId: string;
  ownerType: string;
  lifecycleState: string;
}

/**
 * The heads of those of `ids` that are memories of this workspace (others are simply absent).
 * A plain read takes a reader; a locking read is a write's and takes the writer.
 */
export async function memoryHeads(
  db: Reader,
  workspaceId: string,
  ids: string[],
  options?: { lock?: false },
): Promise<MemoryHead[]>;
export async function memoryHeads(
  db: Queryable,
  workspaceId: string,
  ids: string[],
  options: { lock: boolean },
): Promise<MemoryHead[]>;
export async function memoryHeads(
  db: Reader,
  workspaceId: string,
  ids: string[],
  { lock = false }: { lock?: boolean } = {},
): Promise<MemoryHead[]> {
  if (ids.length === 0) return [];
  const query = db
    .select({
      id: memories.id,
      ownerId: memories.ownerId,
      ownerType: memories.ownerType,
      lifecycleState: memories.lifecycleState,
    })
    .from(memories)
    .where(and(eq(memories.workspaceId, workspaceId), inArray(memories.id, ids)))
    // Id order, so that two transactions locking overlapping sets cannot deadlock.
    .orderBy(asc(memories.id));
  // `for share`: the rows stay as read (no delete, no lifecycle change) until the transaction ends.
  return lock ? query.for('share') : query;
}

/**
 * Inserts the edge unless the same one exists; returns the stored edge and whether this call
 * made it. Racing inserts of one edge meet at the unique constraint, and the loser reads the
 * winner's row.
 */
export async function insertLink(
  db: Queryable,
  edge: { workspaceId: string; sourceMemoryId: string; targetMemoryId: string; relation: string },
): Promise<{ link: MemoryLink; created: boolean }> {
  const [inserted] = await db.insert(memoryLinks).values(edge).onConflictDoNothing().returning();
  if (inserted) return { link: inserted, created: true };
  const [existing] = await db
    .select()
    .from(memoryLinks)
    .where(
      and(
        eq(memoryLinks.workspaceId, edge.workspaceId),
        eq(memoryLinks.sourceMemoryId, edge.sourceMemoryId),
        eq(memoryLinks.targetMemoryId, edge.targetMemoryId),
        eq(memoryLinks.relation, edge.relation),
      ),
    );
  // Only a concurrent delete of the edge (or of an end) between the two statements lands here.
  if (!existing) throw new DatabaseError('link vanished between insert and read');
  return { link: existing, created: false };
}

/** Edges with the memory at either end, oldest first. */
export async function linksOf(
  db: Reader,
  workspaceId: string,
  memoryId: string,
): Promise<MemoryLink[]> {
  return db
    .select()
    .from(memoryLinks)
    .where(
      and(
        eq(memoryLinks.workspaceId, workspaceId),
        or(eq(memoryLinks.sourceMemoryId, memoryId), eq(memoryLinks.targetMemoryId, memoryId)),
      ),
    )
    .orderBy(asc(memoryLinks.createdAt), asc(memoryLinks.id));
}

/** Deletes the edges from source to target (of one relation, or all); returns them. */
export async function deleteLinks(
  db: Queryable,
  edge: { workspaceId: string; sourceMemoryId: string; targetMemoryId: string; relation?: string },
): Promise<MemoryLink[]> {
  return db
    .delete(memoryLinks)
    .where(
      and(
        eq(memoryLinks.workspaceId, edge.workspaceId),
        eq(memoryLinks.sourceMemoryId, edge.sourceMemoryId),
        eq(memoryLinks.targetMemoryId, edge.targetMemoryId),
        ...(edge.relation !== undefined ? [eq(memoryLinks.relation, edge.relation)] : []),
      ),
    )
    .returning();
}

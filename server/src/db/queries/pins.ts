import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { memories, memoryChunks, memoryPins } from '../schema/index.js';
import type { Queryable } from './statement.js';

export interface PinOwner {
  workspaceId: string;
  ownerId: string;
  ownerType: string;
}

export interface PinnedMemory {
  memoryId: string;
  text: string;
  lifecycleState: string;
  pinnedAt: Date;
}

const ofOwner = (owner: PinOwner) =>
  and(
    eq(memoryPins.workspaceId, owner.workspaceId),
    eq(memoryPins.ownerType, owner.ownerType),
    eq(memoryPins.ownerId, owner.ownerId),
  );

/**
 * Serialises pin changes of one owner for the rest of the transaction, so that two concurrent
 * updates cannot both pass the per-owner bound.
 */
export async function lockOwnerPins(db: Queryable, owner: PinOwner): Promise<void> {
  const key = `pins:${owner.workspaceId}:${owner.ownerType}:${owner.ownerId}`;
  await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))::text`);
}

/** The owner's pins with their memories, in pin order (oldest first). */
export async function pinsOf(db: Queryable, owner: PinOwner): Promise<PinnedMemory[]> {
  return db
    .select({
      memoryId: memoryPins.memoryId,
      text: memories.text,
      lifecycleState: memories.lifecycleState,
      pinnedAt: memoryPins.createdAt,
    })
    .from(memoryPins)
    .innerJoin(memories, eq(memories.id, memoryPins.memoryId))
    .where(ofOwner(owner))
    .orderBy(asc(memoryPins.createdAt), asc(memoryPins.id));
}

export async function insertPins(
  db: Queryable,
  owner: PinOwner,
  memoryIds: string[],
): Promise<void> {
  if (memoryIds.length === 0) return;
  await db
    .insert(memoryPins)
    // One statement shares one now(): the clock, plus the position, keeps the order given.
    .values(
      memoryIds.map((memoryId, i) => ({
        ...owner,
        memoryId,
        createdAt: sql`clock_timestamp() + ${i} * interval '1 microsecond'`,
      })),
    )
    .onConflictDoNothing();
}

export async function deletePins(
  db: Queryable,
  owner: PinOwner,
  memoryIds: string[],
): Promise<void> {
  if (memoryIds.length === 0) return;
  await db.delete(memoryPins).where(and(ofOwner(owner), inArray(memoryPins.memoryId, memoryIds)));
}

export interface PinnedChunk {
  memoryId: string;
  chunkId: string;
  chunkIndex: number;
  text: string;
}

/** First chunks of the owner's pinned live memories, in pin order: what context shows first. */
export async function pinnedFirstChunks(db: Queryable, owner: PinOwner): Promise<PinnedChunk[]> {
  return db
    .select({
      memoryId: memoryChunks.memoryId,
      chunkId: memoryChunks.id,
      chunkIndex: memoryChunks.chunkIndex,
      text: memoryChunks.text,
    })
    .from(memoryPins)
    .innerJoin(memories, eq(memories.id, memoryPins.memoryId))
    .innerJoin(
      memoryChunks,
      and(eq(memoryChunks.memoryId, memoryPins.memoryId), eq(memoryChunks.chunkIndex, 0)),
    )
    .where(and(ofOwner(owner), eq(memories.lifecycleState, 'active')))
    .orderBy(asc(memoryPins.createdAt), asc(memoryPins.id));
}

import type { Reader } from '../client.js';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { memories, memoryPins } from '../schema/index.js';
import { historyTimes, liveOrHistory, withHistoryTimes } from './recall.js';
import { type Queryable, Statement } from './statement.js';

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
export async function pinsOf(db: Reader, owner: PinOwner): Promise<PinnedMemory[]> {
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
  /** When its time-bound wording stopped being current truth, in epoch ms (null: never). */
  expiresAtMs: number | null;
  /** The time it is about (effective_at, else created_at), in epoch ms. */
  memoryTimeMs: number;
}

const pinnedFirstChunksStatement = new Statement<{
  workspaceId: string;
  ownerType: string;
  ownerId: string;
}>(`
  select c.memory_id as "memoryId", c.id as "chunkId", c.chunk_index as "chunkIndex", c.text,
    ${historyTimes('m')}
  from memory_pins p
  join memories m on m.id = p.memory_id
  join memory_chunks c on c.memory_id = p.memory_id and c.chunk_index = 0
  where p.workspace_id = :workspaceId::uuid and p.owner_type = :ownerType::text
    and p.owner_id = :ownerId::text and ${liveOrHistory('m')}
  order by p.created_at, p.id`);

/**
 * First chunks of the owner's pinned memories that are current truth or history (expired, see
 * RecallFilter.history), in pin order: what context shows first. A
 * prepared statement (one round trip, see `Statement`): context runs it beside its search.
 */
export async function pinnedFirstChunks(db: Reader, owner: PinOwner): Promise<PinnedChunk[]> {
  const rows = await pinnedFirstChunksStatement.read<{
    memoryId: string;
    chunkId: string;
    chunkIndex: number;
    text: string;
    expiresAtMs: number | string | null;
    memoryTimeMs: number | string;
  }>(db, {
    workspaceId: owner.workspaceId,
    ownerType: owner.ownerType,
    ownerId: owner.ownerId,
  });
  return rows.map(withHistoryTimes);
}

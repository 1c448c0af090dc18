import { createHash } from 'node:crypto';
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import {
  idempotencyRecords,
  memoryLinks,
  memories,
  memoryChunks,
  type IdempotencyRecord,
  type NewIdempotencyRecord,
  type NewMemory,
  type NewMemoryChunk,
} from '../schema/index.js';
import { cosineDistanceTo, embeddingDimensionIs } from './vector.js';

/** Where a memory lives: the workspace, its owner and the three optional labels. */
export interface MemorySpace {
  workspaceId: string;
  ownerId: string;
  ownerType: string;
  scope: string | null;
  namespace: string | null;
  containerTag: string | null;
}

/** A transaction or the database: both run the same queries. */
export type Queryable = Pick<Database, 'select' | 'insert' | 'update' | 'delete' | 'execute'>;

/** The memories of exactly this space (labels compared null-safely). */
export function inSpace(space: MemorySpace): SQL | undefined {
  return and(
    eq(memories.workspaceId, space.workspaceId),
    eq(memories.ownerType, space.ownerType),
    eq(memories.ownerId, space.ownerId),
    sql`${memories.scope} is not distinct from ${space.scope}`,
    sql`${memories.namespace} is not distinct from ${space.namespace}`,
    sql`${memories.containerTag} is not distinct from ${space.containerTag}`,
  );
}

/** A live memory of the same space whose canonical text hashes the same. */
export async function findLiveByContentHash(
  db: Queryable,
  space: MemorySpace,
  contentHash: string,
): Promise<{ id: string } | undefined> {
  const [row] = await db
    .select({ id: memories.id })
    .from(memories)
    .where(
      and(
        inSpace(space),
        eq(memories.contentHash, contentHash),
        eq(memories.lifecycleState, 'active'),
      ),
    )
    .orderBy(asc(memories.createdAt))
    .limit(1);
  return row;
}

export interface NearestMemory {
  memoryId: string;
  text: string;
  /** Cosine similarity of the first chunks, -1..1. */
  similarity: number;
  chunkCount: number;
}

/** Live memories of the space whose first chunk is nearest to `embedding` (same dimension only). */
export async function findNearestLiveMemories(
  db: Queryable,
  space: MemorySpace,
  embedding: number[],
  limit: number,
): Promise<NearestMemory[]> {
  const distance = cosineDistanceTo(embedding);
  const rows = await db
    .select({
      memoryId: memoryChunks.memoryId,
      text: memories.text,
      distance,
      // Qualified by hand: drizzle may render a select-list column unqualified.
      chunkCount:
        sql<number>`(select count(*) from ${memoryChunks} c where c.memory_id = "memory_chunks"."memory_id")`.mapWith(
          Number,
        ),
    })
    .from(memoryChunks)
    .innerJoin(memories, eq(memories.id, memoryChunks.memoryId))
    .where(
      and(
        eq(memoryChunks.workspaceId, space.workspaceId),
        eq(memoryChunks.ownerType, space.ownerType),
        eq(memoryChunks.ownerId, space.ownerId),
        eq(memoryChunks.chunkIndex, 0),
        embeddingDimensionIs(embedding.length),
        inSpace(space),
        eq(memories.lifecycleState, 'active'),
      ),
    )
    .orderBy(distance)
    .limit(limit);
  return rows.map((row) => ({
    memoryId: row.memoryId,
    text: row.text,
    similarity: 1 - row.distance,
    chunkCount: row.chunkCount,
  }));
}

/** The memory to supersede, locked for the rest of the transaction; same workspace and owner only. */
export async function lockMemoryOfOwner(
  db: Queryable,
  space: Pick<MemorySpace, 'workspaceId' | 'ownerId' | 'ownerType'>,
  id: string,
): Promise<{ id: string; lifecycleState: string } | undefined> {
  const [row] = await db
    .select({ id: memories.id, lifecycleState: memories.lifecycleState })
    .from(memories)
    .where(
      and(
        eq(memories.workspaceId, space.workspaceId),
        eq(memories.ownerType, space.ownerType),
        eq(memories.ownerId, space.ownerId),
        eq(memories.id, id),
      ),
    )
    .for('update');
  return row;
}

export async function insertMemoryWithChunks(
  db: Queryable,
  memory: NewMemory & { id: string },
  chunks: Array<Omit<NewMemoryChunk, 'memoryId'>>,
): Promise<void> {
  await db.insert(memories).values(memory);
  if (chunks.length > 0) {
    await db
      .insert(memoryChunks)
      .values(chunks.map((chunk) => ({ ...chunk, memoryId: memory.id })));
  }
}

/**
 * Serialises writes of the same text to the same space for the rest of the transaction, so two
 * concurrent identical writes cannot both miss each other's dedupe check.
 */
export async function lockSpaceContent(
  db: Queryable,
  space: MemorySpace,
  contentHash: string,
): Promise<void> {
  const digest = createHash('sha256')
    .update(
      JSON.stringify([
        space.workspaceId,
        space.ownerType,
        space.ownerId,
        space.scope,
        space.namespace,
        space.containerTag,
        contentHash,
      ]),
    )
    .digest();
  await db.execute(
    sql`select pg_advisory_xact_lock(${digest.readBigInt64BE(0).toString()}::bigint)`,
  );
}

export async function getIdempotencyRecord(
  db: Queryable,
  workspaceId: string,
  key: string,
): Promise<IdempotencyRecord | undefined> {
  const [row] = await db
    .select()
    .from(idempotencyRecords)
    .where(and(eq(idempotencyRecords.workspaceId, workspaceId), eq(idempotencyRecords.key, key)))
    .limit(1);
  return row;
}

/**
 * Claims the key for this write. False when another write holds it: on PostgreSQL the insert
 * waits for that write's transaction, so "false" means it committed first.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  record: NewIdempotencyRecord,
): Promise<boolean> {
  const inserted = await db
    .insert(idempotencyRecords)
    .values(record)
    .onConflictDoNothing()
    .returning({ key: idempotencyRecords.key });
  return inserted.length > 0;
}

/** A link edge, unique per workspace (a repeat is ignored). */
export async function linkMemories(
  db: Queryable,
  workspaceId: string,
  sourceMemoryId: string,
  targetMemoryId: string,
  relation: string,
): Promise<void> {
  await db
    .insert(memoryLinks)
    .values({ workspaceId, sourceMemoryId, targetMemoryId, relation })
    .onConflictDoNothing();
}

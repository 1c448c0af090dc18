import { and, count, desc, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { memories, memoryChunks, type Memory as MemoryRow } from '../schema/index.js';

export type MemoryWithChunkCount = MemoryRow & { chunkCount: number };

export interface MemoryListFilter {
  workspaceId: string;
  ownerId?: string;
  ownerType?: string;
  namespace?: string;
  memoryType?: string;
  /** Every entry must match (jsonb containment). */
  metadata?: Record<string, string | number | boolean | null>;
  createdFrom?: Date;
  createdTo?: Date;
}

// Qualified by hand: inside a select list drizzle renders columns unqualified, and a bare "id"
// in the subquery would bind to memory_chunks.id.
const chunkCount = sql<number>`(select count(*)::int from ${memoryChunks} c where c.memory_id = "memories"."id")`;

/** Tenant-scoped: a memory of another workspace is simply not found. */
export async function getMemoryById(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<MemoryWithChunkCount | undefined> {
  const [row] = await db
    .select({ memory: memories, chunkCount })
    .from(memories)
    .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, id)))
    .limit(1);
  return row ? { ...row.memory, chunkCount: row.chunkCount } : undefined;
}

function listConditions(filter: MemoryListFilter): SQL | undefined {
  const conditions: Array<SQL | undefined> = [eq(memories.workspaceId, filter.workspaceId)];
  if (filter.ownerId !== undefined) conditions.push(eq(memories.ownerId, filter.ownerId));
  if (filter.ownerType !== undefined) conditions.push(eq(memories.ownerType, filter.ownerType));
  if (filter.namespace !== undefined) conditions.push(eq(memories.namespace, filter.namespace));
  if (filter.memoryType !== undefined) conditions.push(eq(memories.memoryType, filter.memoryType));
  if (filter.metadata !== undefined) {
    conditions.push(sql`${memories.metadata} @> ${JSON.stringify(filter.metadata)}::jsonb`);
  }
  if (filter.createdFrom) conditions.push(gte(memories.createdAt, filter.createdFrom));
  if (filter.createdTo) conditions.push(lte(memories.createdAt, filter.createdTo));
  return and(...conditions);
}

export async function listMemories(
  db: Database,
  filter: MemoryListFilter,
  { limit, offset }: { limit: number; offset: number },
): Promise<{ rows: MemoryWithChunkCount[]; total: number }> {
  const where = listConditions(filter);
  const [rows, [totalRow]] = await Promise.all([
    db
      .select({ memory: memories, chunkCount })
      .from(memories)
      .where(where)
      .orderBy(desc(memories.createdAt), desc(memories.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(memories).where(where),
  ]);
  return {
    rows: rows.map((row) => ({ ...row.memory, chunkCount: row.chunkCount })),
    total: totalRow?.total ?? 0,
  };
}

/** Deletes a memory of this workspace; chunks and links go with it (foreign-key cascade). */
/** Deletes a memory (its chunks and links cascade); the UTF-8 bytes of its text, or undefined. */
export async function deleteMemoryById(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<number | undefined> {
  const [deleted] = await db
    .delete(memories)
    .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, id)))
    .returning({ bytes: sql<number>`octet_length(${memories.text})` });
  return deleted ? Number(deleted.bytes) : undefined;
}

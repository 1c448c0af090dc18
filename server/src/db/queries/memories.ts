import type { Reader, Writer } from '../client.js';
import { and, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import {
  memories,
  memoryChunks,
  type Memory as MemoryRow,
  type MemoryMetadata,
} from '../schema/index.js';
import { eventRecords, insertEventsFromJson, type DomainEvent } from './events.js';
import { memoryTimeWithin } from './recall.js';
import { Statement } from './statement.js';

export type MemoryWithChunkCount = MemoryRow & { chunkCount: number };

export interface MemoryListFilter {
  workspaceId: string;
  ownerId?: string;
  ownerType?: string;
  namespace?: string;
  memoryType?: string;
  /** Every entry must match (jsonb containment). */
  metadata?: Record<string, string | number | boolean | null>;
  effectiveFrom?: Date;
  effectiveTo?: Date;
  /** Only the memories extracted from this one. */
  parentMemoryId?: string;
}

// Qualified by hand: inside a select list drizzle renders columns unqualified, and a bare "id"
// in the subquery would bind to memory_chunks.id.
const chunkCount = sql<number>`(select count(*)::int from ${memoryChunks} c where c.memory_id = "memories"."id")`;

/** Tenant-scoped: a memory of another workspace is simply not found. */
export async function getMemoryById(
  db: Reader,
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
  if (filter.parentMemoryId !== undefined) {
    conditions.push(eq(memories.parentMemoryId, filter.parentMemoryId));
  }
  if (filter.metadata !== undefined) {
    conditions.push(sql`${memories.metadata} @> ${JSON.stringify(filter.metadata)}::jsonb`);
  }
  conditions.push(...memoryTimeWithin(filter.effectiveFrom, filter.effectiveTo));
  return and(...conditions);
}

export async function listMemories(
  db: Reader,
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

export interface DeletedMemory {
  /** The extracted descendants (parent_memory_id, at any depth) that went with it. */
  childIds: string[];
  /** UTF-8 bytes of the texts deleted: the memory's and its descendants'. */
  bytes: number;
  /** The deleted memory's metadata (what it counted for is the service's rule). */
  metadata: MemoryMetadata;
}

/** The delete and its `deleted` events, one statement. */
const DELETE_MEMORY = new Statement<{ workspaceId: string; id: string; events: string }>(`
with gone as (
  delete from memories m where m.workspace_id = :workspaceId::uuid and m.id = :id::uuid
  returning m.id
),
events as (
  ${insertEventsFromJson(':events', { from: 'gone' })}
)
select count(*)::int as deleted from gone`);

/**
 * Deletes a memory of this workspace with what the foreign keys cascade to: its chunks and links
 * and its extracted children, with a `deleted` event for each. The row is locked first so that no
 * child can be added between listing the children and the delete. Undefined when there is no
 * such memory.
 */
export async function deleteMemoryById(
  db: Writer,
  workspaceId: string,
  id: string,
): Promise<DeletedMemory | undefined> {
  const textBytes = sql<number>`octet_length(${memories.text})`;
  return db.transaction(async (tx) => {
    const [target] = await tx
      .select({ bytes: textBytes, metadata: memories.metadata })
      .from(memories)
      .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, id)))
      .for('update');
    if (!target) return undefined;
    const childIds: string[] = [];
    let bytes = Number(target.bytes);
    // Level by level: extraction makes one level; the loop stays right if there are more.
    let level = [id];
    while (level.length > 0) {
      const rows = await tx
        .select({ id: memories.id, bytes: textBytes })
        .from(memories)
        .where(and(eq(memories.workspaceId, workspaceId), inArray(memories.parentMemoryId, level)));
      level = rows.map((row) => row.id);
      childIds.push(...level);
      for (const row of rows) bytes += Number(row.bytes);
    }
    const events: DomainEvent[] = [
      { kind: 'deleted', workspaceId, memoryId: id, rule: 'request' },
      ...childIds.map((childId): DomainEvent => ({
        kind: 'deleted',
        workspaceId,
        memoryId: childId,
        rule: 'parent_deleted',
        relatedMemoryId: id,
      })),
    ];
    await DELETE_MEMORY.run(tx, { workspaceId, id, events: eventRecords(events) });
    return { childIds, bytes, metadata: target.metadata };
  });
}

import type {
  LifecycleEvent,
  DeleteMemoryResponse,
  ListMemoriesQuery,
  ListMemoriesResponse,
  Memory,
} from '@mnemo/contract';
import type { Database, Reader } from '../db/client.js';
import {
  deleteMemoryById,
  getMemoryById,
  listMemories as listMemoryRows,
  type MemoryWithChunkCount,
} from '../db/queries/memories.js';
import { lifecycleHistoryFor } from '../db/queries/events.js';
import type { DomainEventRow } from '../db/schema/index.js';
import { ServiceError } from '../errors.js';
import { metadataBytes } from './memory-write/budget.js';
import { recordStorageFreed } from './usage/index.js';
import { ownerFromAliases, resolveOwner } from './owner.js';
import { isUuid } from '../ids.js';

export const DEFAULT_LIST_PAGE_SIZE = 20;

function toLifecycleEvent(event: DomainEventRow): LifecycleEvent {
  return {
    event: event.kind,
    rule: event.rule,
    related_memory_id: event.relatedMemoryId,
    details: event.details,
    at: event.createdAt.toISOString(),
  };
}

/** Memory objects with their lifecycle events (one query for the whole page). */
async function toMemories(
  db: Reader,
  workspaceId: string,
  rows: MemoryWithChunkCount[],
): Promise<Memory[]> {
  const events = await lifecycleHistoryFor(
    db,
    workspaceId,
    rows.map((row) => row.id),
  );
  return rows.map((row) =>
    toMemory(
      row,
      events.filter((event) => event.memoryId === row.id),
    ),
  );
}

function toMemory(row: MemoryWithChunkCount, events: DomainEventRow[]): Memory {
  return {
    id: row.id,
    text: row.text,
    owner_id: row.ownerId,
    owner_type: row.ownerType as Memory['owner_type'],
    scope: row.scope,
    namespace: row.namespace,
    containerTag: row.containerTag,
    metadata: row.metadata,
    memory_type: row.memoryType as Memory['memory_type'],
    importance: row.importance,
    chunk_profile: row.chunkProfile as Memory['chunk_profile'],
    lifecycle_state: row.lifecycleState as Memory['lifecycle_state'],
    confidence: row.confidence,
    volatility: row.volatility,
    expires_at: row.expiresAt?.toISOString() ?? null,
    effective_at: row.effectiveAt?.toISOString() ?? null,
    parent_memory_id: row.parentMemoryId,
    replaced_by_memory_id: row.replacedByMemoryId,
    pinned: row.pinned,
    source_weight: row.sourceWeight,
    priority_score: row.priorityScore,
    claims: row.claims,
    lifecycle_events: events.map(toLifecycleEvent),
    chunks: row.chunkCount,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function notFound(id: string): ServiceError {
  return new ServiceError('NOT_FOUND', `Memory ${id} not found`);
}

export async function getMemory(db: Reader, workspaceId: string, id: string): Promise<Memory> {
  // Not a uuid cannot exist; answering 404 here also keeps a bad id from reaching the uuid column.
  if (!isUuid(id)) throw notFound(id);
  const row = await getMemoryById(db, workspaceId, id);
  if (!row) throw notFound(id);
  const [memory] = await toMemories(db, workspaceId, [row]);
  return memory ?? toMemory(row, []);
}

export async function deleteMemory(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<DeleteMemoryResponse> {
  const deleted = isUuid(id) ? await deleteMemoryById(db, workspaceId, id) : undefined;
  if (deleted === undefined) throw notFound(id);
  // What the memory and its extracted children stored no longer counts against the plan's storage.
  await recordStorageFreed(db, workspaceId, deleted.bytes + metadataBytes(deleted.metadata));
  return { id, deleted: true, deleted_children: deleted.childIds };
}

export async function listMemories(
  db: Reader,
  workspaceId: string,
  query: ListMemoriesQuery,
): Promise<ListMemoriesResponse> {
  const page = query.page ?? 1;
  const pageSize = query.page_size ?? DEFAULT_LIST_PAGE_SIZE;
  // The one owner rule (docs/api-guide.md, Owners): no owner id is the default owner, as for
  // writes and searches; every owner only when asked for with all_owners.
  const owner = query.all_owners
    ? ownerFromAliases({ owner_type: query.owner_type ?? query.entity_type })
    : resolveOwner(query);
  const { rows, total } = await listMemoryRows(
    db,
    {
      workspaceId,
      ...owner,
      ...(query.namespace !== undefined ? { namespace: query.namespace } : {}),
      ...(query.memory_type !== undefined ? { memoryType: query.memory_type } : {}),
      ...(query.metadata !== undefined ? { metadata: query.metadata } : {}),
      ...(query.start_time ? { effectiveFrom: new Date(query.start_time) } : {}),
      ...(query.end_time ? { effectiveTo: new Date(query.end_time) } : {}),
      ...(query.parent_memory_id ? { parentMemoryId: query.parent_memory_id } : {}),
    },
    { limit: pageSize, offset: (page - 1) * pageSize },
  );
  return {
    results: await toMemories(db, workspaceId, rows),
    page,
    page_size: pageSize,
    total,
    has_more: page * pageSize < total,
  };
}

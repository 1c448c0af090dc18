import {
  DEFAULT_LINK_RELATION,
  type CreateLinkPayload,
  type CreateLinkResponse,
  type DeleteLinkQuery,
  type DeleteLinkResponse,
  type ListLinksResponse,
  type MemoryLink,
} from '@mnemo/contract';
import type { Database, Reader } from '../db/client.js';
import {
  deleteLinks,
  insertLink,
  linksOf,
  memoryHeads,
  type MemoryHead,
} from '../db/queries/links.js';
import type { MemoryLink as MemoryLinkRow } from '../db/schema/index.js';
import { ServiceError } from '../errors.js';
import { isUuid } from '../ids.js';

function toLink(row: MemoryLinkRow): MemoryLink {
  return {
    id: row.id,
    source_id: row.sourceMemoryId,
    target_id: row.targetMemoryId,
    relation: row.relation,
    created_at: row.createdAt.toISOString(),
  };
}

const notFound = (id: string) => new ServiceError('NOT_FOUND', `Memory ${id} not found`);

/** The memory of this workspace with this id; another workspace's id is not found either. */
async function memoryHead(db: Reader, workspaceId: string, id: string): Promise<MemoryHead> {
  const [head] = isUuid(id) ? await memoryHeads(db, workspaceId, [id]) : [];
  if (!head) throw notFound(id);
  return head;
}

/**
 * POST /v1/memories/{id}/links: an edge from the memory to `target_id`. Both ends are live
 * memories of one owner in the caller's workspace: context follows links only within the owner's
 * live memories, so an edge it could never follow is refused rather than stored. Creating an edge
 * that exists is idempotent (200, `created: false`), so a retried call is harmless.
 */
export async function createLink(
  db: Database,
  workspaceId: string,
  sourceId: string,
  payload: CreateLinkPayload,
): Promise<CreateLinkResponse> {
  if (sourceId === payload.target_id) {
    throw new ServiceError('BAD_REQUEST', 'A memory cannot be linked to itself', {
      target_id: ['must differ from the memory in the path'],
    });
  }
  return db.transaction(async (tx) => {
    const ids = isUuid(sourceId) ? [sourceId, payload.target_id] : [payload.target_id];
    // Locked, so that neither end is deleted or archived between the check and the insert.
    const heads = await memoryHeads(tx, workspaceId, ids, { lock: true });
    const source = heads.find((head) => head.id === sourceId);
    const target = heads.find((head) => head.id === payload.target_id);
    if (!source) throw notFound(sourceId);
    if (!target) throw notFound(payload.target_id);
    for (const [head, field] of [
      [source, 'id'],
      [target, 'target_id'],
    ] as const) {
      if (head.lifecycleState !== 'active') {
        throw new ServiceError(
          'CONFLICT',
          `Memory ${head.id} is ${head.lifecycleState}, not live`,
          {
            [field]: ['must be a live (active) memory'],
          },
        );
      }
    }
    if (source.ownerId !== target.ownerId || source.ownerType !== target.ownerType) {
      throw new ServiceError('BAD_REQUEST', 'Links join memories of one owner', {
        target_id: ['belongs to another owner than the memory in the path'],
      });
    }
    const { link, created } = await insertLink(tx, {
      workspaceId,
      sourceMemoryId: sourceId,
      targetMemoryId: payload.target_id,
      relation: payload.relation ?? DEFAULT_LINK_RELATION,
    });
    return { link: toLink(link), created };
  });
}

/** GET /v1/memories/{id}/links: edges with the memory at either end. */
export async function listLinks(
  db: Reader,
  workspaceId: string,
  id: string,
): Promise<ListLinksResponse> {
  await memoryHead(db, workspaceId, id);
  return { results: (await linksOf(db, workspaceId, id)).map(toLink) };
}

/**
 * DELETE /v1/memories/{id}/links: the edges from the memory to the target (of one relation, or
 * all); 404 when there is none. Works on memories in any lifecycle state, to clean up.
 */
export async function deleteLink(
  db: Database,
  workspaceId: string,
  sourceId: string,
  query: DeleteLinkQuery,
): Promise<DeleteLinkResponse> {
  await memoryHead(db, workspaceId, sourceId);
  const deleted = await deleteLinks(db, {
    workspaceId,
    sourceMemoryId: sourceId,
    targetMemoryId: query.target_id,
    ...(query.relation !== undefined ? { relation: query.relation } : {}),
  });
  if (deleted.length === 0) {
    const relation = query.relation === undefined ? '' : ` with relation ${query.relation}`;
    throw new ServiceError(
      'NOT_FOUND',
      `No link from memory ${sourceId} to ${query.target_id}${relation}`,
    );
  }
  return { deleted: deleted.map(toLink) };
}

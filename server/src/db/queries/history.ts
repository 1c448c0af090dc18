import type { Reader } from '../client.js';
import { and, count, desc, eq, gte, type SQL } from 'drizzle-orm';
import {
  contextFeedback,
  savedSearches,
  type ContextFeedback,
  type SavedSearch,
} from '../schema/index.js';
import type { Queryable } from './statement.js';
import { lostAnswer } from '../faults.js';

export interface SavedSearchFilter {
  workspaceId: string;
  ownerId?: string;
  ownerType?: string;
  since?: Date;
}

function conditions(filter: SavedSearchFilter): SQL | undefined {
  return and(
    eq(savedSearches.workspaceId, filter.workspaceId),
    ...(filter.ownerId !== undefined ? [eq(savedSearches.ownerId, filter.ownerId)] : []),
    ...(filter.ownerType !== undefined ? [eq(savedSearches.ownerType, filter.ownerType)] : []),
    ...(filter.since !== undefined ? [gte(savedSearches.createdAt, filter.since)] : []),
  );
}

/** A page of saved searches, newest first, and how many match in all. */
export async function listSavedSearches(
  db: Reader,
  filter: SavedSearchFilter,
  { limit, offset }: { limit: number; offset: number },
): Promise<{ rows: SavedSearch[]; total: number }> {
  const where = conditions(filter);
  const [rows, [totalRow]] = await Promise.all([
    db
      .select()
      .from(savedSearches)
      .where(where)
      .orderBy(desc(savedSearches.createdAt), desc(savedSearches.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(savedSearches).where(where),
  ]);
  return { rows, total: totalRow?.total ?? 0 };
}

/** Tenant-scoped: another workspace's saved search is simply not found. */
export async function savedSearchById(
  db: Reader,
  workspaceId: string,
  id: string,
): Promise<SavedSearch | undefined> {
  const [row] = await db
    .select()
    .from(savedSearches)
    .where(and(eq(savedSearches.workspaceId, workspaceId), eq(savedSearches.id, id)));
  return row;
}

export async function insertContextFeedback(
  db: Queryable,
  row: typeof contextFeedback.$inferInsert,
): Promise<ContextFeedback> {
  const [inserted] = await db.insert(contextFeedback).values(row).returning();
  if (!inserted) throw lostAnswer('context feedback insert');
  return inserted;
}

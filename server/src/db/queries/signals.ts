import { and, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import {
  learningSignals,
  memories,
  memoryChunks,
  memoryLinks,
  savedSearches,
  type LearningSignal,
  type NewLearningSignal,
} from '../schema/index.js';
import type { Queryable } from './statement.js';

/** One multi-row insert (searches record their signals in batches). */
export async function insertLearningSignals(
  db: Database,
  signals: NewLearningSignal[],
): Promise<void> {
  if (signals.length === 0) return;
  await db.insert(learningSignals).values(signals);
}

export async function insertSavedSearch(
  db: Database,
  search: typeof savedSearches.$inferInsert,
): Promise<void> {
  await db.insert(savedSearches).values(search);
}

/** The latest signal recorded for a request id, within one workspace only. */
export async function latestSignalForRequest(
  db: Queryable,
  workspaceId: string,
  requestId: string,
): Promise<LearningSignal | undefined> {
  const [row] = await db
    .select()
    .from(learningSignals)
    .where(
      and(eq(learningSignals.workspaceId, workspaceId), eq(learningSignals.requestId, requestId)),
    )
    .orderBy(desc(learningSignals.createdAt), desc(learningSignals.id))
    .limit(1)
    .for('update');
  return row;
}

export async function setSignalFeedback(
  db: Queryable,
  id: string,
  feedback: string,
): Promise<void> {
  await db
    .update(learningSignals)
    .set({ feedback, feedbackAt: new Date() })
    .where(eq(learningSignals.id, id));
}

/** Adds `delta` to a memory's feedback score, kept within ±limit; returns whether it exists. */
export async function adjustFeedbackScore(
  db: Queryable,
  workspaceId: string,
  memoryId: string,
  delta: number,
  limit: number,
): Promise<boolean> {
  const updated = await db
    .update(memories)
    .set({
      feedbackScore: sql`greatest(${-limit}::real, least(${limit}::real, ${memories.feedbackScore} + ${delta}::real))`,
    })
    .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, memoryId)))
    .returning({ id: memories.id });
  return updated.length > 0;
}

export interface LinkedChunk {
  /** The hit it is linked to. */
  linkedFrom: string;
  memoryId: string;
  chunkId: string;
  chunkIndex: number;
  text: string;
  embedding: number[] | null;
  embeddingDimension: number | null;
}

/**
 * First chunks of live memories of the same owner linked (either direction) to any of
 * `memoryIds`, excluding those memories themselves.
 */
export async function linkedFirstChunks(
  db: Database,
  space: { workspaceId: string; ownerId: string; ownerType: string },
  memoryIds: string[],
  limit: number,
): Promise<LinkedChunk[]> {
  if (memoryIds.length === 0) return [];
  const links = await db
    .select({ source: memoryLinks.sourceMemoryId, target: memoryLinks.targetMemoryId })
    .from(memoryLinks)
    .where(
      and(
        eq(memoryLinks.workspaceId, space.workspaceId),
        or(
          inArray(memoryLinks.sourceMemoryId, memoryIds),
          inArray(memoryLinks.targetMemoryId, memoryIds),
        ),
      ),
    );
  const hits = new Set(memoryIds);
  const linkedFrom = new Map<string, string>();
  for (const { source, target } of links) {
    const [from, to] = hits.has(source) ? [source, target] : [target, source];
    if (!hits.has(to) && !linkedFrom.has(to)) linkedFrom.set(to, from);
  }
  if (linkedFrom.size === 0) return [];
  const rows = await db
    .select({
      memoryId: memoryChunks.memoryId,
      chunkId: memoryChunks.id,
      chunkIndex: memoryChunks.chunkIndex,
      text: memoryChunks.text,
      embedding: memoryChunks.embedding,
      embeddingDimension: memoryChunks.embeddingDimension,
    })
    .from(memoryChunks)
    .innerJoin(memories, eq(memories.id, memoryChunks.memoryId))
    .where(
      and(
        eq(memoryChunks.workspaceId, space.workspaceId),
        eq(memoryChunks.ownerType, space.ownerType),
        eq(memoryChunks.ownerId, space.ownerId),
        inArray(memoryChunks.memoryId, [...linkedFrom.keys()]),
        eq(memoryChunks.chunkIndex, 0),
        eq(memories.lifecycleState, 'active'),
      ),
    )
    .limit(limit);
  return rows.map((row) => ({ ...row, linkedFrom: linkedFrom.get(row.memoryId) ?? '' }));
}

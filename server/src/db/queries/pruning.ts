import type { Reader } from '../client.js';
import { and, count, countDistinct, eq, inArray, isNull, lte, sql } from 'drizzle-orm';
import { memories, memoryChunks, domainEvents } from '../schema/index.js';

/** Lifecycle rules that supersede a memory as a duplicate of another. */
export const DUPLICATE_RULES = [
  'hygiene_duplicate',
  'near_duplicate',
  'semantic_duplicate',
  'covered_by_existing',
] as const;
export type DuplicateRule = (typeof DUPLICATE_RULES)[number];

export interface PruningCounts {
  states: Record<string, number>;
  expiredPending: number;
  exactActive: number;
  superseded: Record<DuplicateRule, number>;
  chunks: { total: number; active: number; avg: number; max: number; orphaned: number };
}

/**
 * Aggregates over one workspace, each an indexed scan of its rows: memory states, expired
 * actives, exact duplicates among actives, duplicate supersessions by rule, and chunk counts.
 */
export async function pruningCounts(db: Reader, workspaceId: string): Promise<PruningCounts> {
  const [states, expired, exact, superseded, chunkTotals, perMemory, orphaned] = await Promise.all([
    db
      .select({ state: memories.lifecycleState, n: count() })
      .from(memories)
      .where(eq(memories.workspaceId, workspaceId))
      .groupBy(memories.lifecycleState),
    db
      .select({ n: count() })
      .from(memories)
      .where(
        and(
          eq(memories.workspaceId, workspaceId),
          eq(memories.lifecycleState, 'active'),
          lte(memories.expiresAt, sql`now()`),
        ),
      ),
    // Active memories beyond the first of each (owner, content hash) group.
    db.select({ n: sql<number>`coalesce(sum(g.n - 1), 0)`.mapWith(Number) }).from(
      db
        .select({ n: count().as('n') })
        .from(memories)
        .where(and(eq(memories.workspaceId, workspaceId), eq(memories.lifecycleState, 'active')))
        .groupBy(memories.ownerType, memories.ownerId, memories.contentHash)
        .as('g'),
    ),
    db
      .select({
        rule: domainEvents.rule,
        n: countDistinct(domainEvents.memoryId),
      })
      .from(domainEvents)
      .where(
        and(
          eq(domainEvents.workspaceId, workspaceId),
          eq(domainEvents.kind, 'replaced'),
          inArray(domainEvents.rule, [...DUPLICATE_RULES]),
          // Events outlive their memories; a deleted one is pruned no more.
          sql`exists (select 1 from ${memories} where ${memories.id} = ${domainEvents.memoryId})`,
        ),
      )
      .groupBy(domainEvents.rule),
    db
      .select({
        total: count(),
        active: sql<number>`count(*) filter (where ${memories.lifecycleState} = 'active')`.mapWith(
          Number,
        ),
      })
      .from(memoryChunks)
      .leftJoin(memories, eq(memories.id, memoryChunks.memoryId))
      .where(eq(memoryChunks.workspaceId, workspaceId)),
    db
      .select({
        avg: sql<number>`coalesce(round(avg(c.n), 2), 0)`.mapWith(Number),
        max: sql<number>`coalesce(max(c.n), 0)`.mapWith(Number),
      })
      .from(
        db
          .select({ n: count().as('n') })
          .from(memoryChunks)
          .where(eq(memoryChunks.workspaceId, workspaceId))
          .groupBy(memoryChunks.memoryId)
          .as('c'),
      ),
    // Chunks whose memory is missing or belongs elsewhere (foreign keys make this 0; counted
    // rather than assumed, since search trusts the chunk's denormalised workspace).
    db
      .select({ n: count() })
      .from(memoryChunks)
      .leftJoin(
        memories,
        and(eq(memories.id, memoryChunks.memoryId), eq(memories.workspaceId, workspaceId)),
      )
      .where(and(eq(memoryChunks.workspaceId, workspaceId), isNull(memories.id))),
  ]);
  const supersededBy = Object.fromEntries(
    DUPLICATE_RULES.map((rule) => [rule, superseded.find((row) => row.rule === rule)?.n ?? 0]),
  ) as Record<DuplicateRule, number>;
  return {
    states: Object.fromEntries(states.map((row) => [row.state, row.n])),
    expiredPending: expired[0]?.n ?? 0,
    exactActive: exact[0]?.n ?? 0,
    superseded: supersededBy,
    chunks: {
      total: chunkTotals[0]?.total ?? 0,
      active: chunkTotals[0]?.active ?? 0,
      avg: perMemory[0]?.avg ?? 0,
      max: perMemory[0]?.max ?? 0,
      orphaned: orphaned[0]?.n ?? 0,
    },
  };
}

import type { Reader } from '../client.js';
import { and, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { memories, memoryChunks } from '../schema/index.js';
import {
  memoryFilterConditions,
  recallRows,
  recalled,
  type MemoryColumns,
  type RecallFilter,
  type RecalledChunk,
} from './recall.js';

/** A memory written near a seed memory in the same episode, as its first chunk. */
export interface EpisodeNeighbour extends Omit<RecalledChunk, 'score' | 'coverage'> {
  seedMemoryId: string;
  /** 1 for the memory written just before or after the seed, 2 for the one beyond it, and so on. */
  step: number;
}

type NeighbourRow = MemoryColumns & {
  seed_id: string;
  step: number | string;
  chunk_id: string;
};

/**
 * For each seed memory, the `span` memories of its owner written just before it and just after it
 * (by `created_at`) that pass the search's filter, when they belong to the same episode: their
 * time (`effective_at`, else `created_at`) lies within `windowSeconds` of the seed's. One round
 * trip; each side is `span` steps along the (workspace, owner, created_at, id) index.
 */
export async function episodeNeighbours(
  db: Reader,
  filter: RecallFilter,
  seedMemoryIds: string[],
  windowSeconds: number,
  span: number,
): Promise<EpisodeNeighbour[]> {
  if (seedMemoryIds.length === 0 || span < 1) return [];
  const rows = await recallRows<NeighbourRow>(
    db,
    episodeNeighboursQuery(filter, seedMemoryIds, windowSeconds, span),
  );
  return rows.map((row) => neighbourOf(row.seed_id, Number(row.step), row));
}

/** A neighbour from its raw row (its recall score is meaningless: 0). */
export function neighbourOf(
  seedMemoryId: string,
  step: number,
  row: MemoryColumns & { chunk_id: string },
): EpisodeNeighbour {
  return Object.assign(recalled(row.chunk_id, row, 0), { seedMemoryId, step });
}

/**
 * The statement behind {@link episodeNeighbours} (exported for plan tests). The seeds are a list
 * of ids, or an SQL expression of a `uuid[]` (the one-trip search passes the recalled memories).
 */
export function episodeNeighboursQuery(
  filter: RecallFilter,
  seedMemoryIds: string[] | SQL,
  windowSeconds: number,
  span: number,
): SQL {
  const seed = alias(memories, 'seed');
  const columns = sql`${memoryChunks.id} as chunk_id, ${memories.id} as memory_id,
    ${memoryChunks.chunkIndex} as chunk_index, ${memoryChunks.text} as text,
    ${memories.memoryType} as memory_type, ${memories.importance} as importance,
    ${memories.confidence} as confidence, ${memories.feedbackScore} as feedback_score,
    ${memories.pinned} as pinned, ${memories.sourceWeight} as source_weight,
    ${memories.parentMemoryId} as parent_memory_id, ${memories.createdAt} as created_at, ${memories.effectiveAt} as effective_at,
    ${memories.expiresAt} as expires_at`;
  const side = (direction: 'before' | 'after') => {
    const comparison = direction === 'before' ? sql`<` : sql`>`;
    const order = direction === 'before' ? sql`desc` : sql`asc`;
    // Numbered outwards from the seed; the window sorts only the `span` rows the index gave.
    return sql`(select row_number() over (order by steps.created_at ${order}, steps.memory_id ${order}) as step, steps.*
      from (select ${columns}
      from ${memories}
      inner join ${memoryChunks} on ${memoryChunks.memoryId} = ${memories.id} and ${memoryChunks.chunkIndex} = 0
      where ${memories.workspaceId} = ${seed.workspaceId}
        and ${memories.ownerType} = ${seed.ownerType}
        and ${memories.ownerId} = ${seed.ownerId}
        and (${memories.createdAt}, ${memories.id}) ${comparison} (${seed.createdAt}, ${seed.id})
        and ${and(...memoryFilterConditions(filter))}
      order by ${memories.createdAt} ${order}, ${memories.id} ${order}
      limit ${sql.raw(String(Math.trunc(span)))}) as steps)`;
  };
  // One text parameter, whatever the number of seeds: the statement's text stays the same.
  const ids = Array.isArray(seedMemoryIds)
    ? sql`string_to_array(${seedMemoryIds.join(',')}, ',')::uuid[]`
    : seedMemoryIds;
  return sql`select ${seed.id} as seed_id, neighbour.*
      from ${memories} as seed
      cross join lateral (${side('before')} union all ${side('after')}) as neighbour
      where ${seed.workspaceId} = ${filter.workspaceId}
        and ${seed.ownerType} = ${filter.ownerType}
        and ${seed.ownerId} = ${filter.ownerId}
        and ${seed.id} = any(${ids})
        and abs(extract(epoch from (coalesce(neighbour.effective_at, neighbour.created_at) - coalesce(${seed.effectiveAt}, ${seed.createdAt}))))
          <= ${windowSeconds}`;
}

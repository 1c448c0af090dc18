import type { Reader, Writer } from '../client.js';
import { and, desc, eq, sql } from 'drizzle-orm';
import {
  learningSignals,
  memories,
  savedSearches,
  type LearningSignal,
  type NewLearningSignal,
} from '../schema/index.js';
import { parseVectorLiteral } from '../schema/columns.js';
import { eventRecords, insertEventsFromJson, type DomainEvent } from './events.js';
import { historyTimes, liveOrHistory, withHistoryTimes } from './recall.js';
import { type Queryable, Statement } from './statement.js';

const insertLearningSignalsStatement = new Statement<{
  workspaceIds: string[];
  requestIds: string[];
  routes: string[];
  ownerIds: string[];
  ownerTypes: string[];
  queries: string[];
  results: string[];
  createdAts: string[];
}>(`
  insert into learning_signals
    (workspace_id, request_id, route, owner_id, owner_type, query, results, created_at)
  select * from unnest(:workspaceIds::uuid[], :requestIds::text[], :routes::text[],
    :ownerIds::text[], :ownerTypes::text[], :queries::text[], :results::text[]::jsonb[],
    :createdAts::text[]::timestamptz[])`);

/**
 * One insert per batch (searches record their signals in batches), as a prepared statement with
 * one array per column: its text is the same for any batch, so it is parsed once per connection,
 * where the builder's multi-row insert was built and described anew for every batch (about 5 % of
 * a search's Node CPU, measured in a profile of the speed bench's searches).
 */
export async function insertLearningSignals(
  db: Queryable,
  signals: NewLearningSignal[],
): Promise<void> {
  if (signals.length === 0) return;
  const now = new Date().toISOString();
  await insertLearningSignalsStatement.run(db, {
    workspaceIds: signals.map((signal) => signal.workspaceId),
    requestIds: signals.map((signal) => signal.requestId),
    routes: signals.map((signal) => signal.route),
    ownerIds: signals.map((signal) => signal.ownerId),
    ownerTypes: signals.map((signal) => signal.ownerType),
    queries: signals.map((signal) => signal.query),
    results: signals.map((signal) => JSON.stringify(signal.results)),
    createdAts: signals.map((signal) => signal.createdAt?.toISOString() ?? now),
  });
}

export async function insertSavedSearch(
  db: Writer,
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

const SET_SIGNAL_FEEDBACK = new Statement<{
  id: string;
  feedback: string;
  at: string;
  events: string;
}>(`
with voted as (
  update learning_signals set feedback = :feedback::text, feedback_at = :at::timestamptz
  where id = :id::uuid
  returning 1
),
events as (
  ${insertEventsFromJson(':events', { from: 'voted' })}
)
select count(*)::int as voted from voted`);

/** Records the vote on the signal, with its `feedback` event, in one statement. */
export async function setSignalFeedback(
  db: Queryable,
  id: string,
  feedback: string,
  events: readonly DomainEvent[],
): Promise<void> {
  await SET_SIGNAL_FEEDBACK.run(db, {
    id,
    feedback,
    at: new Date().toISOString(),
    events: eventRecords(events),
  });
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
  /** As PinnedChunk's: when it stopped being current truth, and the time it is about. */
  expiresAtMs: number | null;
  memoryTimeMs: number;
}

const linkedFirstChunksStatement = new Statement<{
  workspaceId: string;
  ownerType: string;
  ownerId: string;
  memoryIds: string[];
  limit: number;
}>(`
  with hit as (
    select h.id, h.ord from unnest(:memoryIds::uuid[]) with ordinality as h(id, ord)
  ),
  edge as (
    select distinct on (o.other) o.other, hit.id as linked_from, hit.ord
    from memory_links l
    join hit on hit.id = l.source_memory_id or hit.id = l.target_memory_id
    cross join lateral (
      select case when hit.id = l.source_memory_id then l.target_memory_id
                  else l.source_memory_id end as other
    ) o
    where l.workspace_id = :workspaceId::uuid and o.other <> all(:memoryIds::uuid[])
    order by o.other, hit.ord
  )
  select c.memory_id as "memoryId", c.id as "chunkId", c.chunk_index as "chunkIndex", c.text,
    c.embedding::text as embedding, c.embedding_dimension as "embeddingDimension",
    e.linked_from as "linkedFrom", ${historyTimes('m')}
  from edge e
  join memory_chunks c on c.memory_id = e.other and c.chunk_index = 0
  join memories m on m.id = c.memory_id
  where c.workspace_id = :workspaceId::uuid and c.owner_type = :ownerType::text
    and c.owner_id = :ownerId::text and ${liveOrHistory('m')}
  order by e.ord, e.other
  limit :limit::int`);

/**
 * First chunks of live memories of the same owner linked (either direction) to any of
 * `memoryIds`, excluding those memories themselves: each names the first of `memoryIds` it is
 * linked to, and the first `limit` follow the order of `memoryIds`. One prepared statement (one
 * round trip; see `Statement`).
 */
export async function linkedFirstChunks(
  db: Reader,
  space: { workspaceId: string; ownerId: string; ownerType: string },
  memoryIds: string[],
  limit: number,
): Promise<LinkedChunk[]> {
  if (memoryIds.length === 0) return [];
  const rows = await linkedFirstChunksStatement.read<{
    memoryId: string;
    chunkId: string;
    chunkIndex: number;
    text: string;
    embedding: string | null;
    embeddingDimension: number | null;
    linkedFrom: string;
    expiresAtMs: number | string | null;
    memoryTimeMs: number | string;
  }>(db, {
    workspaceId: space.workspaceId,
    ownerType: space.ownerType,
    ownerId: space.ownerId,
    memoryIds,
    limit,
  });
  return rows.map((row) => ({
    ...withHistoryTimes(row),
    embedding: row.embedding === null ? null : parseVectorLiteral(row.embedding),
  }));
}

import { and, asc, desc, eq, gt, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Reader } from '../client.js';
import {
  auditLog,
  contextFeedback,
  domainEvents,
  idempotencyRecords,
  learningSignals,
  memories,
  memoryChunks,
  memoryLinks,
  memoryPins,
  savedSearches,
  type DomainEventRow,
  type Memory,
  type MemoryLink,
  type MemoryPin,
  type NewDomainEventRow,
  type NewMemory,
  type NewMemoryChunk,
  type NewMemoryLink,
} from '../schema/index.js';
import type { Queryable } from './statement.js';

/** One owner, or (null) every owner of the workspace. */
export interface OwnerKey {
  ownerId: string;
  ownerType: string;
}

function ownerScope(workspaceId: string, owner: OwnerKey | null): SQL {
  const conditions = [eq(memories.workspaceId, workspaceId)];
  if (owner) {
    conditions.push(eq(memories.ownerType, owner.ownerType), eq(memories.ownerId, owner.ownerId));
  }
  return and(...conditions)!;
}

// ---------------------------------------------------------------------------------------------
// Export

export interface ExportChunkRow {
  id: string;
  memoryId: string;
  chunkIndex: number;
  text: string;
  embedding: number[] | null;
  embeddingProvider: string | null;
  embeddingDimension: number | null;
  embeddingVersion: string | null;
  createdAt: Date;
}

/** Everything an export line holds about a page of memories, read in a few queries. */
export interface ExportPage {
  memories: Memory[];
  chunks: ExportChunkRow[];
  events: DomainEventRow[];
  links: MemoryLink[];
  pins: MemoryPin[];
  children: Array<{ id: string; parentId: string }>;
  replaced: Array<{ id: string; replacedById: string }>;
}

/** The next `limit` memories after `after` in id order (the export cursor's order). */
export async function readExportPage(
  db: Reader,
  workspaceId: string,
  owner: OwnerKey | null,
  { after, limit, embeddings }: { after: string | null; limit: number; embeddings: boolean },
): Promise<ExportPage> {
  const scope = ownerScope(workspaceId, owner);
  const rows = await db
    .select()
    .from(memories)
    .where(after ? and(scope, gt(memories.id, after)) : scope)
    .orderBy(asc(memories.id))
    .limit(limit);
  const ids = rows.map((row) => row.id);
  if (ids.length === 0) {
    return {
      memories: [],
      chunks: [],
      events: [],
      links: [],
      pins: [],
      children: [],
      replaced: [],
    };
  }
  const [chunks, events, links, pins, children, replaced] = await Promise.all([
    db
      .select({
        id: memoryChunks.id,
        memoryId: memoryChunks.memoryId,
        chunkIndex: memoryChunks.chunkIndex,
        text: memoryChunks.text,
        embedding: embeddings ? memoryChunks.embedding : sql<null>`null`,
        embeddingProvider: memoryChunks.embeddingProvider,
        embeddingDimension: memoryChunks.embeddingDimension,
        embeddingVersion: memoryChunks.embeddingVersion,
        createdAt: memoryChunks.createdAt,
      })
      .from(memoryChunks)
      .where(and(eq(memoryChunks.workspaceId, workspaceId), inArray(memoryChunks.memoryId, ids)))
      .orderBy(asc(memoryChunks.memoryId), asc(memoryChunks.chunkIndex)),
    db
      .select()
      .from(domainEvents)
      .where(and(eq(domainEvents.workspaceId, workspaceId), inArray(domainEvents.memoryId, ids)))
      .orderBy(asc(domainEvents.createdAt), asc(domainEvents.seq)),
    db
      .select()
      .from(memoryLinks)
      .where(
        and(
          eq(memoryLinks.workspaceId, workspaceId),
          or(inArray(memoryLinks.sourceMemoryId, ids), inArray(memoryLinks.targetMemoryId, ids)),
        ),
      )
      .orderBy(asc(memoryLinks.createdAt), asc(memoryLinks.id)),
    db
      .select()
      .from(memoryPins)
      .where(and(eq(memoryPins.workspaceId, workspaceId), inArray(memoryPins.memoryId, ids))),
    db
      .select({ id: memories.id, parentId: sql<string>`${memories.parentMemoryId}` })
      .from(memories)
      .where(and(eq(memories.workspaceId, workspaceId), inArray(memories.parentMemoryId, ids)))
      .orderBy(asc(memories.id)),
    // No index leads with replaced_by: the owner's (or workspace's) rows are the scan's bound.
    db
      .select({ id: memories.id, replacedById: sql<string>`${memories.replacedByMemoryId}` })
      .from(memories)
      .where(and(scope, inArray(memories.replacedByMemoryId, ids)))
      .orderBy(asc(memories.id)),
  ]);
  return { memories: rows, chunks, events, links, pins, children, replaced };
}

// ---------------------------------------------------------------------------------------------
// Import

/** Which of `ids` exist in `table`, and in which workspace. */
export async function ownersOfIds(
  db: Queryable,
  table: 'memories' | 'memory_chunks' | 'domain_events' | 'memory_links' | 'memory_pins',
  ids: string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const column = {
    memories: [memories, memories.id, memories.workspaceId],
    memory_chunks: [memoryChunks, memoryChunks.id, memoryChunks.workspaceId],
    domain_events: [domainEvents, domainEvents.id, domainEvents.workspaceId],
    memory_links: [memoryLinks, memoryLinks.id, memoryLinks.workspaceId],
    memory_pins: [memoryPins, memoryPins.id, memoryPins.workspaceId],
  } as const;
  const [from, id, workspace] = column[table];
  const rows = await db.select({ id, workspaceId: workspace }).from(from).where(inArray(id, ids));
  return new Map(rows.map((row) => [row.id, row.workspaceId]));
}

/** Idempotency keys of `keys` already used by memories of the workspace. */
export async function usedIdempotencyKeys(
  db: Queryable,
  workspaceId: string,
  keys: string[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .select({ key: memories.idempotencyKey })
    .from(memories)
    .where(and(eq(memories.workspaceId, workspaceId), inArray(memories.idempotencyKey, keys)));
  return new Set(rows.map((row) => row.key).filter((key): key is string => key !== null));
}

export interface ImportRows {
  memories: NewMemory[];
  chunks: NewMemoryChunk[];
  events: NewDomainEventRow[];
  links: NewMemoryLink[];
  pins: Array<typeof memoryPins.$inferInsert>;
  /** References whose other end may have arrived before this batch (the reverse side of a line). */
  parentOf: Array<{ childId: string; parentId: string }>;
  replacedBy: Array<{ id: string; replacedById: string }>;
}

export interface ImportedCounts {
  memories: number;
  chunks: number;
  events: number;
  links: number;
  pins: number;
}

/**
 * One batch of an import, inside the caller's transaction. Memories first (one statement, so
 * references inside the batch hold), then what hangs on them; every insert skips rows already
 * there, so a second import of the same lines writes nothing. A link is written once both its
 * ends are in the workspace; a reference to a memory not imported yet stays empty until the line
 * on the other side of it arrives (each reference is on both lines).
 */
export async function insertImportBatch(
  tx: Queryable,
  workspaceId: string,
  rows: ImportRows,
): Promise<ImportedCounts> {
  const count = async (query: Promise<Array<{ id: string }>>) => (await query).length;
  const insertedMemories =
    rows.memories.length === 0
      ? 0
      : await count(
          tx
            .insert(memories)
            .values(rows.memories)
            .onConflictDoNothing()
            .returning({ id: memories.id }),
        );
  const chunks =
    rows.chunks.length === 0
      ? 0
      : await count(
          tx
            .insert(memoryChunks)
            .values(rows.chunks)
            .onConflictDoNothing()
            .returning({ id: memoryChunks.id }),
        );
  const events =
    rows.events.length === 0
      ? 0
      : await count(
          tx
            .insert(domainEvents)
            .values(rows.events)
            .onConflictDoNothing()
            .returning({ id: domainEvents.id }),
        );
  for (const { childId, parentId } of rows.parentOf) {
    await tx
      .update(memories)
      .set({ parentMemoryId: parentId })
      .where(
        and(
          eq(memories.workspaceId, workspaceId),
          eq(memories.id, childId),
          isNull(memories.parentMemoryId),
          inWorkspace(workspaceId, parentId),
        ),
      );
  }
  for (const { id, replacedById } of rows.replacedBy) {
    await tx
      .update(memories)
      .set({ replacedByMemoryId: replacedById })
      .where(
        and(
          eq(memories.workspaceId, workspaceId),
          eq(memories.id, id),
          isNull(memories.replacedByMemoryId),
          inWorkspace(workspaceId, replacedById),
        ),
      );
  }
  const ends = [...new Set(rows.links.flatMap((l) => [l.sourceMemoryId, l.targetMemoryId]))];
  const present = new Set(
    ends.length === 0
      ? []
      : (
          await tx
            .select({ id: memories.id })
            .from(memories)
            .where(and(eq(memories.workspaceId, workspaceId), inArray(memories.id, ends)))
        ).map((row) => row.id),
  );
  const linkable = rows.links.filter(
    (link) => present.has(link.sourceMemoryId) && present.has(link.targetMemoryId),
  );
  const links =
    linkable.length === 0
      ? 0
      : await count(
          tx
            .insert(memoryLinks)
            .values(linkable)
            .onConflictDoNothing()
            .returning({ id: memoryLinks.id }),
        );
  const pins =
    rows.pins.length === 0
      ? 0
      : await count(
          tx
            .insert(memoryPins)
            .values(rows.pins)
            .onConflictDoNothing()
            .returning({ id: memoryPins.id }),
        );
  return { memories: insertedMemories, chunks, events, links, pins };
}

function inWorkspace(workspaceId: string, memoryId: string): SQL {
  return sql`exists (select 1 from ${memories} as target where target.workspace_id = ${workspaceId} and target.id = ${memoryId})`;
}

// ---------------------------------------------------------------------------------------------
// Erasure

export interface ErasedCounts {
  memories: number;
  memory_chunks: number;
  memory_links: number;
  memory_pins: number;
  domain_events: number;
  learning_signals: number;
  saved_searches: number;
  context_feedback: number;
  idempotency_records: number;
  audit_log: number;
}

const UUID_IN_TEXT = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * Deletes everything the workspace holds about one owner, inside the caller's transaction, and
 * counts it per table. Besides the owner's rows: the links and pins of its memories, their
 * outbox events (and events of its memories deleted earlier that its signals still name), the
 * feedback on its searches, the replayable responses of its writes, and the audit paths that
 * name its memories (redacted to the route pattern; the audit row of the request stays).
 */
export async function eraseOwnerRows(
  tx: Queryable,
  workspaceId: string,
  owner: OwnerKey,
): Promise<{ counts: ErasedCounts; bytes: number }> {
  // Subqueries rather than id lists: an owner may hold more memories than a statement has
  // parameters. The memories themselves go last, so every subquery still sees them.
  const ownedIds = () =>
    tx.select({ id: memories.id }).from(memories).where(ownerScope(workspaceId, owner));
  const ownedIdTexts = sql`array(select ${memories.id}::text from ${memories} where ${ownerScope(workspaceId, owner)})`;
  const [stored] = await tx
    .select({ bytes: sql<string>`coalesce(sum(octet_length(${memories.text})), 0)` })
    .from(memories)
    .where(ownerScope(workspaceId, owner));
  const signalScope = and(
    eq(learningSignals.workspaceId, workspaceId),
    eq(learningSignals.ownerType, owner.ownerType),
    eq(learningSignals.ownerId, owner.ownerId),
  );
  const signals = await tx
    .select({ requestId: learningSignals.requestId, results: learningSignals.results })
    .from(learningSignals)
    .where(signalScope);
  const requestIds = [...new Set(signals.map((signal) => signal.requestId))];
  // Memories its searches returned that are gone now (deleted before): their events go too.
  const named = [...new Set(signals.flatMap((s) => s.results.map((r) => r.memoryId)))];
  const gone: string[] = [];
  for (const part of slices(named)) {
    const live = new Set(
      (
        await tx
          .select({ id: memories.id })
          .from(memories)
          .where(and(eq(memories.workspaceId, workspaceId), inArray(memories.id, part)))
      ).map((row) => row.id),
    );
    gone.push(...part.filter((id) => !live.has(id)));
  }

  const deleted = async (query: Promise<unknown[]>) => (await query).length;
  const memoryChunksCount = await deleted(
    tx
      .delete(memoryChunks)
      .where(
        and(
          eq(memoryChunks.workspaceId, workspaceId),
          or(
            and(
              eq(memoryChunks.ownerType, owner.ownerType),
              eq(memoryChunks.ownerId, owner.ownerId),
            ),
            inArray(memoryChunks.memoryId, ownedIds()),
          ),
        ),
      )
      .returning({ id: memoryChunks.id }),
  );
  const memoryLinksCount = await deleted(
    tx
      .delete(memoryLinks)
      .where(
        and(
          eq(memoryLinks.workspaceId, workspaceId),
          or(
            inArray(memoryLinks.sourceMemoryId, ownedIds()),
            inArray(memoryLinks.targetMemoryId, ownedIds()),
          ),
        ),
      )
      .returning({ id: memoryLinks.id }),
  );
  const memoryPinsCount = await deleted(
    tx
      .delete(memoryPins)
      .where(
        and(
          eq(memoryPins.workspaceId, workspaceId),
          or(
            and(eq(memoryPins.ownerType, owner.ownerType), eq(memoryPins.ownerId, owner.ownerId)),
            inArray(memoryPins.memoryId, ownedIds()),
          ),
        ),
      )
      .returning({ id: memoryPins.id }),
  );
  let domainEventsCount = await deleted(
    tx
      .delete(domainEvents)
      .where(
        and(eq(domainEvents.workspaceId, workspaceId), inArray(domainEvents.memoryId, ownedIds())),
      )
      .returning({ id: domainEvents.id }),
  );
  for (const part of slices(gone)) {
    domainEventsCount += await deleted(
      tx
        .delete(domainEvents)
        .where(and(eq(domainEvents.workspaceId, workspaceId), inArray(domainEvents.memoryId, part)))
        .returning({ id: domainEvents.id }),
    );
  }
  for (const part of slices(requestIds)) {
    domainEventsCount += await deleted(
      tx
        .delete(domainEvents)
        .where(
          and(
            eq(domainEvents.workspaceId, workspaceId),
            eq(domainEvents.kind, 'feedback'),
            inArray(sql`${domainEvents.details}->>'request_id'`, part),
          ),
        )
        .returning({ id: domainEvents.id }),
    );
  }
  // Another memory's history that names one of these keeps its own event, without the name.
  await tx
    .update(domainEvents)
    .set({ relatedMemoryId: null })
    .where(
      and(
        eq(domainEvents.workspaceId, workspaceId),
        inArray(domainEvents.relatedMemoryId, ownedIds()),
      ),
    );
  let contextFeedbackCount = await deleted(
    tx
      .delete(contextFeedback)
      .where(
        and(
          eq(contextFeedback.workspaceId, workspaceId),
          sql`(${contextFeedback.helpfulMemoryIds} ?| ${ownedIdTexts} or ${contextFeedback.unhelpfulMemoryIds} ?| ${ownedIdTexts})`,
        ),
      )
      .returning({ id: contextFeedback.id }),
  );
  for (const part of slices(requestIds)) {
    contextFeedbackCount += await deleted(
      tx
        .delete(contextFeedback)
        .where(
          and(
            eq(contextFeedback.workspaceId, workspaceId),
            inArray(contextFeedback.requestId, part),
          ),
        )
        .returning({ id: contextFeedback.id }),
    );
  }
  const idempotencyRecordsCount = await deleted(
    tx
      .delete(idempotencyRecords)
      .where(
        and(
          eq(idempotencyRecords.workspaceId, workspaceId),
          sql`${idempotencyRecords.response}->>'memory_id' = any(${ownedIdTexts})`,
        ),
      )
      .returning({ key: idempotencyRecords.key }),
  );
  const auditLogCount = await deleted(
    tx
      .update(auditLog)
      .set({ path: sql`coalesce(${auditLog.route}, '[erased]')` })
      .where(
        and(
          eq(auditLog.workspaceId, workspaceId),
          sql`${auditLog.path} ~ ${UUID_IN_TEXT}`,
          sql`(regexp_match(${auditLog.path}, ${UUID_IN_TEXT}))[1] = any(${ownedIdTexts})`,
        ),
      )
      .returning({ id: auditLog.id }),
  );
  const learningSignalsCount = await deleted(
    tx.delete(learningSignals).where(signalScope).returning({ id: learningSignals.id }),
  );
  const savedSearchesCount = await deleted(
    tx
      .delete(savedSearches)
      .where(
        and(
          eq(savedSearches.workspaceId, workspaceId),
          eq(savedSearches.ownerType, owner.ownerType),
          eq(savedSearches.ownerId, owner.ownerId),
        ),
      )
      .returning({ id: savedSearches.id }),
  );
  const memoriesCount = await deleted(
    tx.delete(memories).where(ownerScope(workspaceId, owner)).returning({ id: memories.id }),
  );
  return {
    counts: {
      memories: memoriesCount,
      memory_chunks: memoryChunksCount,
      memory_links: memoryLinksCount,
      memory_pins: memoryPinsCount,
      domain_events: domainEventsCount,
      learning_signals: learningSignalsCount,
      saved_searches: savedSearchesCount,
      context_feedback: contextFeedbackCount,
      idempotency_records: idempotencyRecordsCount,
      audit_log: auditLogCount,
    },
    bytes: Number(stored?.bytes ?? 0),
  };
}

/** Parameter lists of at most 5 000 values (a statement takes at most 65 535). */
function slices(values: string[], size = 5_000): string[][] {
  const parts: string[][] = [];
  for (let i = 0; i < values.length; i += size) parts.push(values.slice(i, i + size));
  return parts;
}

/** The latest erasure receipt (an `erased` event) of the owner with this hash. */
export async function latestErasure(
  db: Reader,
  workspaceId: string,
  ownerHash: string,
): Promise<DomainEventRow | undefined> {
  const [row] = await db
    .select()
    .from(domainEvents)
    .where(
      and(
        eq(domainEvents.workspaceId, workspaceId),
        eq(domainEvents.kind, 'erased'),
        sql`${domainEvents.details}->>'owner_hash' = ${ownerHash}`,
      ),
    )
    .orderBy(desc(domainEvents.seq))
    .limit(1);
  return row;
}

import type { Reader, Writer } from '../client.js';
import { halfvecLiteral } from '../schema/index.js';
import { eventRecords, insertEventsFromJson, type DomainEvent } from './events.js';
import {
  childChunkRecords,
  childColumns,
  type ChunkRecord,
  type ChunkRows,
  IN_SPACE,
  MEMORY_COLUMNS,
  answersTurnSql,
  contextTextSql,
  latestMemoryOfOwnerSql,
  RECORD_VALUES,
  lookupColumns,
  lookupsOf,
  spaceContentKey,
  spaceParams,
  type ChildMemoryWrite,
  type LookupRow,
  type MemoryRow,
  type MemorySpace,
  type NewMemoryWrite,
  type SpaceParams,
  type WriteAudit,
  type WriteClaim,
  type WriteLookups,
} from './memory-writes.js';
import { Statement, statementPerDimension } from './statement.js';
import { embeddingType } from './vector.js';

/** What one item of a batch asks its lookup for (as `writeLookups`, without a replacement). */
export interface BatchLookupKeys {
  contentHash: string;
  idempotencyKey: string | null;
  claimKeys: string[];
  /** The first chunk's vector; undefined: no nearest memories. */
  embedding: number[] | undefined;
}

type BatchLookupParams = SpaceParams & { items: string; limit: number };

const batchLookupStatement = statementPerDimension<BatchLookupParams>(
  (dimension) => `
select
  r.request_hash as "requestHash",
  r.response,
  false as "replacementFound",
  ${lookupColumns(dimension, { contentHash: 'i.content_hash', claimKeys: 'i.claim_keys', embedding: 'i.embedding' })}
from (
  -- Each vector read once, not at every row a nearest-memory scan compares (offset 0 keeps
  -- the planner from inlining the cast into the scans).
  select j.ord, j.content_hash, j.idempotency_key, j.claim_keys,
    ${dimension ? `j.embedding::${embeddingType(dimension)}` : 'j.embedding'} as embedding
  from jsonb_to_recordset(:items::jsonb)
    as j (ord int, content_hash text, idempotency_key text, claim_keys text[], embedding text)
  offset 0
) i
left join idempotency_records r on r.workspace_id = :workspaceId::uuid and r.key = i.idempotency_key
order by i.ord`,
);

/**
 * The lookups of many writes to one space in one statement, in their order: what
 * `writeLookups` answers for each, as if each ran alone against what is stored now.
 */
export async function batchLookups(
  db: Reader,
  space: MemorySpace,
  items: readonly BatchLookupKeys[],
  nearestLimit: number,
): Promise<WriteLookups[]> {
  const dimension = items.find((item) => item.embedding)?.embedding?.length ?? 0;
  const rows = await batchLookupStatement(dimension).read<LookupRow>(db, {
    ...spaceParams(space),
    items: JSON.stringify(
      items.map((item, ord) => ({
        ord,
        content_hash: item.contentHash,
        idempotency_key: item.idempotencyKey,
        claim_keys: item.claimKeys,
        embedding: item.embedding ? halfvecLiteral(item.embedding) : null,
      })),
    ),
    limit: nearestLimit,
  });
  return rows.map(lookupsOf);
}

/** A memory superseded by the batch's memory `by`, the `ord`th of {@link BatchWrite.memories}. */
export interface BatchSupersession {
  memoryId: string;
  by: string;
  ord: number;
}

/**
 * A write of the batch that merged into the memory `memoryId` (stored before, or a top-level
 * memory of the batch): its text, assessment, metadata (undefined: kept) and chunks replace the
 * memory's, as `rewriteMemory` does. `ord`: its place, the number of the batch's new memories
 * written before it.
 */
export interface BatchMerge {
  memoryId: string;
  ord: number;
  text: string;
  contentHash: string;
  assessed: Pick<
    MemoryRow,
    | 'confidence'
    | 'volatility'
    | 'expiresAt'
    | 'claims'
    | 'claimKeys'
    | 'pinned'
    | 'sourceWeight'
    | 'priorityScore'
  >;
  metadata: Record<string, unknown> | undefined;
  chunks: Pick<ChunkRows, 'texts' | 'vectors' | 'provider' | 'dimension' | 'version'>;
}

/** The rows of a batch of writes to one space: new memories (children too), their records. */
export interface BatchWrite {
  space: MemorySpace;
  /** New memories in write order, each with its children; none is a replacement. */
  memories: NewMemoryWrite[];
  /**
   * Every supersession the memories decide, in write order: of a memory stored before (updated),
   * or of an earlier memory of the batch (stored already superseded).
   */
  supersessions: BatchSupersession[];
  /** Every merge into a memory, in write order (a memory may take several). */
  merges: BatchMerge[];
  /** The idempotency records to claim: of new memories and of duplicates alike. */
  claims: WriteClaim[];
  /** Every event, in write order: `created`, `extracted`, and duplicates' `deduped`. */
  events: DomainEvent[];
  /** One audit record per write that is not a replay. */
  audits: WriteAudit[];
}

const LOCK_SPACE_CONTENTS = new Statement<{ keys: string[] }>(
  `select count(pg_advisory_xact_lock(k))::int as locked from unnest(:keys::bigint[]) as k`,
);

type BatchInsertParams = SpaceParams & {
  recheck: string[];
  superseded: string;
  merged: string;
  versions: string;
  changedIds: string[];
  predecessorWindowSeconds: number;
  claims: string;
  memories: string;
  chunks: string;
  links: string;
  events: string;
  audits: string;
};

const MEMORY_RECORD = `id uuid, ord int, text text, metadata jsonb, memory_type text,
  importance real, chunk_profile text, lifecycle_state text, confidence real, volatility real,
  expires_at timestamptz, effective_at timestamptz, content_hash text, claims jsonb,
  claim_keys text[], pinned boolean, source_weight real, priority_score real,
  idempotency_key text, parent_memory_id uuid, replaced_by_memory_id uuid, updated_ord int`;

/**
 * Every row of a batch in one statement: `raced` counts the new memories whose text an identical
 * live memory holds now (committed while the batch waited for its locks; not one the batch
 * supersedes), `claimed` the keys it took; the caller rolls back unless both are as planned.
 * Each memory's `created_at` is the transaction's time plus its place in microseconds, so the
 * batch keeps the order per-item writes would give it (a supersession's `updated_at` is its
 * superseder's); each turn's first chunk takes as context the turn it answers (the batch's
 * previous memory, or the owner's latest stored one, leaving out those the turn supersedes; its
 * text and metadata as merges before the turn left them), as a per-item write would. Stored
 * memories the batch supersedes are updated; those it merges into are rewritten, their chunks
 * replaced (deleted before the new ones are inserted).
 */
const INSERT_BATCH = new Statement<BatchInsertParams>(`
with raced as (
  select 1 from memories m
  where ${IN_SPACE} and m.content_hash = any (:recheck::text[]) and m.lifecycle_state = 'active'
    and m.id <> all (:changedIds::uuid[])
),
claimed as (
  insert into idempotency_records (workspace_id, key, request_hash, response)
  select :workspaceId::uuid, k.key, k.request_hash, k.response
  from jsonb_to_recordset(:claims::jsonb) as k (key text, request_hash text, response jsonb)
  on conflict do nothing
  returning 1
),
memory as (
  insert into memories (${MEMORY_COLUMNS}, idempotency_key, parent_memory_id, replaced_by_memory_id, created_at, updated_at)
  select ${RECORD_VALUES},
    k.idempotency_key, k.parent_memory_id, k.replaced_by_memory_id,
    now() + k.ord * interval '1 microsecond',
    now() + coalesce(k.updated_ord, k.ord) * interval '1 microsecond'
  from jsonb_to_recordset(:memories::jsonb) as k (${MEMORY_RECORD})
),
superseded as (
  update memories s set lifecycle_state = 'replaced', replaced_by_memory_id = x.by,
    updated_at = now() + x.ord * interval '1 microsecond'
  from jsonb_to_recordset(:superseded::jsonb) as x (id uuid, by uuid, ord int)
  where s.id = x.id and s.workspace_id = :workspaceId::uuid
),
merged as (
  update memories s set text = x.text, content_hash = x.content_hash, confidence = x.confidence,
    volatility = x.volatility, expires_at = x.expires_at, claims = x.claims,
    claim_keys = x.claim_keys, pinned = x.pinned, source_weight = x.source_weight,
    priority_score = x.priority_score, metadata = coalesce(x.metadata, s.metadata),
    updated_at = now() + x.ord * interval '1 microsecond'
  from jsonb_to_recordset(:merged::jsonb) as x (id uuid, ord int, text text, content_hash text,
    confidence real, volatility real, expires_at timestamptz, claims jsonb, claim_keys text[],
    pinned boolean, source_weight real, priority_score real, metadata jsonb)
  where s.id = x.id and s.workspace_id = :workspaceId::uuid
),
unchunked as (
  delete from memory_chunks c using jsonb_to_recordset(:merged::jsonb) as x (id uuid)
  where c.memory_id = x.id and c.workspace_id = :workspaceId::uuid
  returning 1
),
turns as (
  select k.id, k.ord, coalesce(k.turn_text, k.text) as text,
    coalesce(k.turn_metadata, k.metadata) as metadata, k.supersede,
    coalesce(k.effective_at, now() + k.ord * interval '1 microsecond') as at
  from jsonb_to_recordset(:memories::jsonb) as k (id uuid, ord int, text text, metadata jsonb,
    effective_at timestamptz, parent_memory_id uuid, supersede uuid[], turn_text text,
    turn_metadata jsonb)
  where k.parent_memory_id is null
),
versions as (
  select * from jsonb_to_recordset(:versions::jsonb) as v (id uuid, ord int, text text, metadata jsonb)
),
turn_context as (
  select turn.id, ${contextTextSql('previous.text')} as text
  from turns turn
  cross join lateral (
    select coalesce(version.text, latest.text) as text,
      coalesce(version.metadata, latest.metadata) as metadata, latest.at
    from (
      select * from (
        select earlier.id, earlier.ord, earlier.text, earlier.metadata, earlier.at from turns earlier
        where earlier.ord < turn.ord and earlier.id <> all (turn.supersede)
        union all
        select stored.id, -1, stored.text, stored.metadata, stored.at
        from (${latestMemoryOfOwnerSql('turn.supersede')}) as stored
      ) as candidates
      order by candidates.ord desc limit 1
    ) as latest
    left join lateral (
      select v.text, v.metadata from versions v
      where v.id = latest.id and v.ord <= turn.ord
      order by v.ord desc limit 1
    ) as version on true
  ) as previous
  where ${answersTurnSql(
    {
      metadata: 'turn.metadata',
      at: 'turn.at',
      windowSeconds: ':predecessorWindowSeconds::float8',
    },
    'previous',
  )}
),
chunks as (
  insert into memory_chunks (memory_id, workspace_id, owner_id, owner_type, chunk_index, text,
    context_text, embedding, embedding_provider, embedding_dimension, embedding_version)
  select c.memory_id, :workspaceId::uuid, :ownerId::text, :ownerType::text, c.chunk_index, c.text,
    case when c.chunk_index = 0 and c.no_context is not true
      then (select t.text from turn_context t where t.id = c.memory_id) end,
    c.embedding::halfvec, c.provider, c.dimension, c.version
  from jsonb_to_recordset(:chunks::jsonb) as c (memory_id uuid, chunk_index int, text text,
    embedding text, provider text, dimension int, version text, no_context boolean)
  -- After the chunks of memories merged into are deleted: they hold the same indexes.
  where (select count(*) from unchunked) >= 0
),
links as (
  insert into memory_links (workspace_id, source_memory_id, target_memory_id, relation)
  select :workspaceId::uuid, l.source, l.target, 'extracted'
  from jsonb_to_recordset(:links::jsonb) as l (source uuid, target uuid)
  on conflict do nothing
),
events as (
  ${insertEventsFromJson(':events')}
),
audited as (
  insert into audit_log (request_id, workspace_id, api_key_id, method, path, route, status, duration_ms, ip, user_agent)
  select a.request_id, a.workspace_id, a.api_key_id, a.method, a.path, a.route, 200, a.duration_ms, a.ip, a.user_agent
  from jsonb_to_recordset(:audits::jsonb) as a (request_id text, workspace_id uuid, api_key_id uuid,
    method text, path text, route text, duration_ms int, ip text, user_agent text)
)
select (select count(*) from raced)::int as raced, (select count(*) from claimed)::int as claimed`);

/** A chunk of the batch; `no_context`: a merge's, which takes no turn context (as a merge stores it). */
type BatchChunkRecord = ChunkRecord & { no_context?: boolean };

/** A concurrent write took a key or stored a text the batch planned to: nothing was written. */
export class BatchRaced extends Error {}

function batchParams(batch: BatchWrite): BatchInsertParams {
  const memories: Array<Record<string, unknown>> = [];
  const chunks: BatchChunkRecord[] = [];
  const links: Array<{ source: string; target: string }> = [];
  const supersessions = new Map(batch.supersessions.map((s) => [s.memoryId, s]));
  const inBatch = new Set<string>();
  // A memory of the batch that a later one supersedes is stored superseded.
  const finalState = (id: string) => {
    inBatch.add(id);
    const by = supersessions.get(id);
    return by
      ? { lifecycle_state: 'replaced', replaced_by_memory_id: by.by, updated_ord: by.ord }
      : {};
  };
  const rows = new Map<string, Record<string, unknown>>();
  batch.memories.forEach((write, ord) => {
    const { memory } = write;
    rows.set(memory.id, {
      // The parent's row has the same columns as a child's.
      ...childColumns({ ...write.space, ...memory } as ChildMemoryWrite['memory']),
      ord,
      idempotency_key: write.claim?.key ?? null,
      parent_memory_id: null,
      supersede: write.supersede,
      ...finalState(memory.id),
    });
    memories.push(rows.get(memory.id)!);
    write.chunks.texts.forEach((text, index) => {
      const vector = write.chunks.vectors[index];
      chunks.push({
        memory_id: memory.id,
        chunk_index: index,
        text,
        embedding: vector ? halfvecLiteral(vector) : null,
        provider: write.chunks.provider,
        dimension: write.chunks.dimension,
        version: write.chunks.version,
      });
    });
    for (const child of write.children) {
      memories.push({
        ...childColumns(child.memory),
        ord,
        idempotency_key: null,
        parent_memory_id: memory.id,
        supersede: [],
        ...finalState(child.memory.id),
      });
      chunks.push(...childChunkRecords(child));
      links.push({ source: memory.id, target: child.memory.id });
    }
  });
  const storedSupersessions = batch.supersessions.filter((s) => !inBatch.has(s.memoryId));
  const { merged, versions } = applyMerges(batch.merges, rows, chunks);
  return {
    ...spaceParams(batch.space),
    recheck: batch.memories.filter((write) => write.recheck).map((w) => w.memory.contentHash),
    superseded: JSON.stringify(
      storedSupersessions.map((s) => ({ id: s.memoryId, by: s.by, ord: s.ord })),
    ),
    merged: JSON.stringify(merged),
    versions: JSON.stringify(versions),
    changedIds: [
      ...storedSupersessions.map((s) => s.memoryId),
      ...merged.map((m) => m.id as string),
    ],
    // One setting of the server: the same for every memory of the batch.
    predecessorWindowSeconds: batch.memories[0]?.chunks.predecessorWindowSeconds ?? 0,
    claims: JSON.stringify(
      batch.claims.map((claim) => ({
        key: claim.key,
        request_hash: claim.requestHash,
        response: claim.response,
      })),
    ),
    memories: JSON.stringify(memories),
    chunks: JSON.stringify(chunks),
    links: JSON.stringify(links),
    events: eventRecords(batch.events),
    audits: JSON.stringify(
      batch.audits.map((audit) => ({
        request_id: audit.requestId,
        workspace_id: audit.workspaceId,
        api_key_id: audit.apiKeyId,
        method: audit.method,
        path: audit.path,
        route: audit.route,
        duration_ms: audit.durationMs,
        ip: audit.ip,
        user_agent: audit.userAgent,
      })),
    ),
  };
}

/**
 * The merges of a batch: a memory of the batch (`rows`, by id) takes the last merge's text,
 * assessment and metadata, and keeps what it was written with for the turn context; the chunks
 * of every memory merged into become the last merge's (in `chunks`, without context). Returns the
 * stored memories' final rows and every version a turn may read as its predecessor.
 */
function applyMerges(
  merges: readonly BatchMerge[],
  rows: ReadonlyMap<string, Record<string, unknown>>,
  chunks: BatchChunkRecord[],
): { merged: Array<Record<string, unknown>>; versions: Array<Record<string, unknown>> } {
  const last = new Map<string, BatchMerge>();
  const versions: Array<Record<string, unknown>> = [];
  const metadataNow = new Map<string, Record<string, unknown> | null>();
  for (const merge of merges) {
    last.set(merge.memoryId, merge);
    const row = rows.get(merge.memoryId);
    const before = metadataNow.has(merge.memoryId)
      ? metadataNow.get(merge.memoryId)!
      : ((row?.metadata as Record<string, unknown> | undefined) ?? null);
    const metadata = merge.metadata ?? before;
    metadataNow.set(merge.memoryId, metadata);
    versions.push({ id: merge.memoryId, ord: merge.ord, text: merge.text, metadata });
  }
  const merged: Array<Record<string, unknown>> = [];
  for (const [id, merge] of last) {
    const { assessed } = merge;
    const columns = {
      text: merge.text,
      content_hash: merge.contentHash,
      confidence: assessed.confidence,
      volatility: assessed.volatility,
      expires_at: assessed.expiresAt,
      claims: assessed.claims,
      claim_keys: assessed.claimKeys,
      pinned: assessed.pinned,
      source_weight: assessed.sourceWeight,
      priority_score: assessed.priorityScore,
    };
    const row = rows.get(id);
    if (row) {
      Object.assign(row, {
        turn_text: row.text,
        turn_metadata: row.metadata,
        ...columns,
        metadata: metadataNow.get(id),
        updated_ord: Math.max(Number(row.updated_ord ?? row.ord), merge.ord),
      });
    } else {
      merged.push({ id, ord: merge.ord, ...columns, metadata: metadataNow.get(id) ?? null });
    }
    for (let i = chunks.length - 1; i >= 0; i -= 1)
      if (chunks[i]!.memory_id === id) chunks.splice(i, 1);
    merge.chunks.texts.forEach((text, index) => {
      const vector = merge.chunks.vectors[index];
      chunks.push({
        memory_id: id,
        chunk_index: index,
        text,
        embedding: vector ? halfvecLiteral(vector) : null,
        provider: merge.chunks.provider,
        dimension: merge.chunks.dimension,
        version: merge.chunks.version,
        no_context: true,
      });
    });
  }
  return { merged, versions };
}

const SQLSTATE_UNIQUE_VIOLATION = '23505';

function isUniqueViolation(error: unknown): boolean {
  for (let cause = error; cause && typeof cause === 'object';) {
    if ((cause as { code?: unknown }).code === SQLSTATE_UNIQUE_VIOLATION) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Writes a batch in one transaction: the locks on the space's contents of its new memories (in
 * key order, so two batches cannot deadlock), then one statement with every row. Throws
 * {@link BatchRaced}, having written nothing, when a concurrent write got in between.
 */
export async function insertBatch(db: Writer, batch: BatchWrite): Promise<void> {
  const keys = [
    ...new Set(
      batch.memories
        .filter((write) => write.recheck)
        .map((write) => spaceContentKey(batch.space, write.memory.contentHash)),
    ),
  ].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  try {
    await db.transaction(async (tx) => {
      if (keys.length > 0) await LOCK_SPACE_CONTENTS.run(tx, { keys });
      const [row] = await INSERT_BATCH.run<{ raced: number; claimed: number }>(
        tx,
        batchParams(batch),
      );
      if (!row || row.raced > 0 || row.claimed < batch.claims.length) throw new BatchRaced();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new BatchRaced();
    throw error;
  }
}

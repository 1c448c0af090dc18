import { DEFAULT_IMPORTANCE } from '@mnemo/contract';
import type { Reader, Writer } from '../client.js';
import { createHash } from 'node:crypto';
import {
  type MemoryClaim,
  type NewMemory,
  type NewMemoryChunk,
  halfvecLiteral,
} from '../schema/index.js';
import { lostAnswer } from '../faults.js';
import type { ClaimHolder } from './claims.js';
import { assertEmbeddingDimension, embeddingType } from './vector.js';
import { eventRecords, insertEventsFromJson, type DomainEvent } from './events.js';
import { inOneTrip, statementPerDimension, step, Statement, type Queryable } from './statement.js';

export type { Queryable } from './statement.js';

/** Where a memory lives: the workspace, its owner and the three optional labels. */
export interface MemorySpace {
  workspaceId: string;
  ownerId: string;
  ownerType: string;
  scope: string | null;
  namespace: string | null;
  containerTag: string | null;
}

export type SpaceParams = { [K in keyof MemorySpace]: MemorySpace[K] };

/** The memories (aliased `m`) of exactly this space, labels compared null-safely. */
export const IN_SPACE = `m.workspace_id = :workspaceId::uuid and m.owner_type = :ownerType::text
  and m.owner_id = :ownerId::text and m.scope is not distinct from :scope::text
  and m.namespace is not distinct from :namespace::text
  and m.container_tag is not distinct from :containerTag::text`;

export const spaceParams = (space: MemorySpace): SpaceParams => ({
  workspaceId: space.workspaceId,
  ownerType: space.ownerType,
  ownerId: space.ownerId,
  scope: space.scope,
  namespace: space.namespace,
  containerTag: space.containerTag,
});

export interface NearestMemory {
  memoryId: string;
  text: string;
  /** Cosine similarity of the first chunks, -1..1. */
  similarity: number;
  chunkCount: number;
}

/**
 * Live memories of the space whose first chunk is nearest to `embedding` (a parameter, or a
 * column of the statement around it), nearest first, with
 * their chunk counts. N is inlined (see `embeddingDimensionIs`) so the planner can pick the
 * partial HNSW index of that dimension.
 */
export function nearestSql(dimension: number, embedding = ':embedding'): string {
  assertEmbeddingDimension(dimension);
  return `
select c.memory_id as "memoryId", m.text,
  (c.embedding::${embeddingType(dimension)} <=> ${embedding}::${embeddingType(dimension)}) as distance,
  (select count(*) from memory_chunks n where n.memory_id = c.memory_id)::int as "chunkCount"
from memory_chunks c
join memories m on m.id = c.memory_id
where c.workspace_id = :workspaceId::uuid and c.owner_type = :ownerType::text
  and c.owner_id = :ownerId::text and c.chunk_index = 0 and c.embedding_dimension = ${dimension}
  and ${IN_SPACE} and m.lifecycle_state = 'active'
order by distance
limit :limit::int`;
}

export interface NearestRow {
  memoryId: string;
  text: string;
  distance: number;
  chunkCount: number;
}

export const nearestMemory = (row: NearestRow): NearestMemory => ({
  memoryId: row.memoryId,
  text: row.text,
  similarity: 1 - Number(row.distance),
  chunkCount: Number(row.chunkCount),
});

type NearestParams = SpaceParams & { embedding: string; limit: number };

const nearestStatements = new Map<number, Statement<NearestParams>>();

/** Live memories of the space whose first chunk is nearest to `embedding` (same dimension only). */
export async function findNearestLiveMemories(
  db: Reader,
  space: MemorySpace,
  embedding: number[],
  limit: number,
): Promise<NearestMemory[]> {
  let statement = nearestStatements.get(embedding.length);
  if (!statement) {
    statement = new Statement(nearestSql(embedding.length));
    nearestStatements.set(embedding.length, statement);
  }
  const rows = await statement.read<Record<string, unknown> & NearestRow>(db, {
    ...spaceParams(space),
    embedding: halfvecLiteral(embedding),
    limit,
  });
  return rows.map(nearestMemory);
}

export interface WriteLookups {
  /** The first write with this idempotency key, if any. */
  idempotency?: { requestHash: string; response: Record<string, unknown> } | undefined;
  /** The oldest live memory of the space with the same canonical text. */
  duplicateId?: string | undefined;
  /** Whether `replaces_memory_id` names a memory of this workspace and owner. */
  replacementFound: boolean;
  /** Live memories of the space stating any of the claim keys (oldest first, 50 at most). */
  claimHolders: ClaimHolder[];
  /** With `nearest` asked for: as {@link findNearestLiveMemories}. */
  nearest: NearestMemory[];
}

type LookupParams = SpaceParams & {
  contentHash: string | null;
  idempotencyKey: string | null;
  replacesId: string | null;
  claimKeys: string[];
  embedding: string | null;
  limit: number;
};

/**
 * The columns of a write's lookup that depend on its text: the exact duplicate, the memories
 * holding the same claims and (with a dimension) the nearest memories. Each input is an SQL
 * expression: a parameter of one write, or a column of a batch's items.
 */
export function lookupColumns(
  dimension: number,
  input: { contentHash: string; claimKeys: string; embedding: string },
): string {
  const nearest = dimension
    ? `(select coalesce(json_agg(n order by n.distance), '[]'::json) from (${nearestSql(dimension, input.embedding)}) n)`
    : `'[]'::json`;
  return `
  (select m.id from memories m
    where ${input.contentHash} is not null and ${IN_SPACE}
      and m.content_hash = ${input.contentHash} and m.lifecycle_state = 'active'
    order by m.created_at limit 1) as "duplicateId",
  (select coalesce(json_agg(h order by h."createdAt"), '[]'::json) from (
    select m.id, m.text, m.claims, m.effective_at as "effectiveAt", m.created_at as "createdAt", m.confidence
    from memories m
    where cardinality(${input.claimKeys}) > 0 and ${IN_SPACE}
      and m.lifecycle_state = 'active' and m.claim_keys && ${input.claimKeys}
    order by m.created_at limit 50) h) as "claimHolders",
  ${nearest} as nearest`;
}

/** Keyed by the dimension of the nearest-memories part, 0 for none. */
const lookupStatement = statementPerDimension<LookupParams>(
  (dimension) => `
select
  i.request_hash as "requestHash",
  i.response,
  exists (select 1 from memories m
    where m.workspace_id = :workspaceId::uuid and m.owner_type = :ownerType::text
      and m.owner_id = :ownerId::text and m.id = :replacesId::uuid) as "replacementFound",
  ${lookupColumns(dimension, { contentHash: ':contentHash::text', claimKeys: ':claimKeys::text[]', embedding: ':embedding' })}
from (values (1)) as one (x)
left join idempotency_records i on i.workspace_id = :workspaceId::uuid and i.key = :idempotencyKey::text`,
);

export type LookupRow = {
  requestHash: string | null;
  response: Record<string, unknown> | null;
  duplicateId: string | null;
  replacementFound: boolean;
  claimHolders: Array<
    Omit<ClaimHolder, 'effectiveAt' | 'createdAt'> & {
      effectiveAt: string | null;
      createdAt: string;
    }
  >;
  nearest: NearestRow[];
};

/**
 * Everything a write needs to know before deciding, in one statement: the idempotency record,
 * the exact duplicate, whether the memory to replace exists, the memories holding the same
 * claims and, given an embedding, the nearest memories. A null or empty input skips its part.
 */
export async function writeLookups(
  db: Reader,
  space: MemorySpace,
  input: {
    contentHash: string | null;
    idempotencyKey: string | null;
    replacesId: string | null;
    claimKeys: string[];
    nearest?: { embedding: number[]; limit: number } | undefined;
  },
): Promise<WriteLookups> {
  const { nearest, ...rest } = input;
  const [row] = await lookupStatement(nearest?.embedding.length ?? 0).read<LookupRow>(db, {
    ...spaceParams(space),
    ...rest,
    embedding: nearest ? halfvecLiteral(nearest.embedding) : null,
    limit: nearest?.limit ?? 0,
  });
  if (!row) throw lostAnswer('write lookups');
  return lookupsOf(row);
}

/** A lookup row as the write reads it. */
export function lookupsOf(row: LookupRow): WriteLookups {
  return {
    idempotency:
      row.requestHash !== null && row.response !== null
        ? { requestHash: row.requestHash, response: row.response }
        : undefined,
    duplicateId: row.duplicateId ?? undefined,
    replacementFound: row.replacementFound,
    claimHolders: row.claimHolders.map((holder) => ({
      ...holder,
      effectiveAt: holder.effectiveAt === null ? null : new Date(holder.effectiveAt),
      createdAt: new Date(holder.createdAt),
    })),
    nearest: row.nearest.map(nearestMemory),
  };
}

const LOCK_MEMORY_OF_OWNER = new Statement<{
  workspaceId: string;
  ownerType: string;
  ownerId: string;
  id: string;
}>(`
select m.id from memories m
where m.workspace_id = :workspaceId::uuid and m.owner_type = :ownerType::text
  and m.owner_id = :ownerId::text and m.id = :id::uuid
for update`);

/** Locks the memory to supersede for the rest of the transaction; false when it is not this owner's. */
export async function lockMemoryOfOwner(
  db: Queryable,
  space: Pick<MemorySpace, 'workspaceId' | 'ownerId' | 'ownerType'>,
  id: string,
): Promise<boolean> {
  const rows = await LOCK_MEMORY_OF_OWNER.run(db, {
    workspaceId: space.workspaceId,
    ownerType: space.ownerType,
    ownerId: space.ownerId,
    id,
  });
  return rows.length > 0;
}

/**
 * Serialises writes of the same text to the same space for the rest of the transaction, so two
 * concurrent identical writes cannot both miss each other's dedupe check.
 */
const LOCK_SPACE_CONTENT = new Statement<{ key: string }>(
  `select pg_advisory_xact_lock(:key::bigint)::text as locked`,
);

export function spaceContentKey(space: MemorySpace, contentHash: string): string {
  const digest = createHash('sha256')
    .update(
      JSON.stringify([
        space.workspaceId,
        space.ownerType,
        space.ownerId,
        space.scope,
        space.namespace,
        space.containerTag,
        contentHash,
      ]),
    )
    .digest();
  return digest.readBigInt64BE(0).toString();
}

/** The request's audit record, written in the same statement as the rest of the write. */
export interface WriteAudit {
  requestId: string;
  workspaceId: string | null;
  apiKeyId: string | null;
  method: string;
  path: string;
  route: string | null;
  durationMs: number;
  ip: string | null;
  userAgent: string | null;
}

/** The idempotency record to claim; null when the write has no key. */
export interface WriteClaim {
  key: string;
  requestHash: string;
  response: unknown;
}

/** The claim and audit record as statement parameters (the audit's workspace may be null). */
type FinishParams = {
  [K in keyof Omit<WriteAudit, 'workspaceId'>]: WriteAudit[K];
} & {
  workspaceId: string;
  idempotencyKey: string | null;
  requestHash: string | null;
  response: string | null;
  auditWorkspaceId: string | null;
  events: string;
};

function finishParams(
  workspaceId: string,
  claim: WriteClaim | null,
  audit: WriteAudit,
  events: readonly DomainEvent[],
): FinishParams {
  return {
    workspaceId,
    events: eventRecords(events),
    idempotencyKey: claim?.key ?? null,
    requestHash: claim?.requestHash ?? null,
    response: claim ? JSON.stringify(claim.response) : null,
    requestId: audit.requestId,
    auditWorkspaceId: audit.workspaceId,
    apiKeyId: audit.apiKeyId,
    method: audit.method,
    path: audit.path,
    route: audit.route,
    durationMs: audit.durationMs,
    ip: audit.ip,
    userAgent: audit.userAgent,
  };
}

/** The columns every insert of memories sets (besides those particular to it). */
export const MEMORY_COLUMNS = `id, workspace_id, owner_id, owner_type, scope, namespace, container_tag, text,
    metadata, memory_type, importance, chunk_profile, lifecycle_state, confidence, volatility,
    expires_at, effective_at, content_hash, claims, claim_keys, pinned, source_weight,
    priority_score`;

/** {@link MEMORY_COLUMNS}' values from a record `k` of memory rows, in a space's statement. */
export const RECORD_VALUES = `k.id, :workspaceId::uuid, :ownerId::text, :ownerType::text, :scope::text,
    :namespace::text, :containerTag::text, k.text, k.metadata, k.memory_type, k.importance,
    k.chunk_profile, k.lifecycle_state, k.confidence, k.volatility, k.expires_at, k.effective_at,
    k.content_hash, k.claims, k.claim_keys, k.pinned, k.source_weight, k.priority_score`;

/** Unless a claim of the idempotency key (CTE `claimed`) failed. */
const UNLESS_CLAIM_LOST = `(:idempotencyKey::text is null or exists (select 1 from claimed))`;

/** The request's audit record, unless a claim of its idempotency key (CTE `claimed`) failed. */
const AUDITED = `audited as (
  insert into audit_log (request_id, workspace_id, api_key_id, method, path, route, status, duration_ms, ip, user_agent)
  select :requestId::text, :auditWorkspaceId::uuid, :apiKeyId::uuid, :method::text, :path::text, :route::text, 200,
    :durationMs::int, :ip::text, :userAgent::text
  where ${UNLESS_CLAIM_LOST}
)`;

/**
 * Claims the idempotency key (on PostgreSQL the insert waits for a concurrent write holding it,
 * so "not claimed" means that one committed first) and, unless the claim failed, writes the
 * audit record and the write's events.
 */
const FINISH_WRITE = new Statement<FinishParams>(`
with claimed as (
  insert into idempotency_records (workspace_id, key, request_hash, response)
  select :workspaceId::uuid, :idempotencyKey::text, :requestHash::text, :response::jsonb
  where :idempotencyKey::text is not null
  on conflict do nothing
  returning 1
),
events as (
  ${insertEventsFromJson(':events', { where: UNLESS_CLAIM_LOST })}
),
${AUDITED}
select (select count(*) from claimed)::int as claimed`);

/**
 * The idempotency record, audit record and events of a write that stored nothing new (a
 * duplicate) or whose changes ran before it in the same transaction. One statement, so atomic on
 * its own. False when the key was claimed by a concurrent write first: nothing was written.
 */
export async function finishWrite(
  db: Queryable,
  workspaceId: string,
  claim: WriteClaim | null,
  audit: WriteAudit,
  events: readonly DomainEvent[],
): Promise<boolean> {
  const [row] = await FINISH_WRITE.run<{ claimed: number }>(
    db,
    finishParams(workspaceId, claim, audit, events),
  );
  return claim === null || (row?.claimed ?? 0) > 0;
}

/** A memory's columns as the write statement takes them. */
export interface MemoryRow {
  id: string;
  text: string;
  metadata: Record<string, unknown>;
  memoryType: string;
  importance: number;
  chunkProfile: string;
  lifecycleState: 'active' | 'replaced';
  confidence: number;
  volatility: number;
  expiresAt: Date | null;
  effectiveAt: Date | null;
  contentHash: string;
  claims: MemoryClaim[];
  claimKeys: string[];
  pinned: boolean;
  sourceWeight: number;
  priorityScore: number;
  replacedByMemoryId: string | null;
}

export interface ChunkRows {
  texts: string[];
  vectors: number[][];
  /** Null with no vectors (embedding skipped): vector search then never compares these chunks. */
  provider: string | null;
  dimension: number | null;
  version: string | null;
  /**
   * How far apart in time (seconds) the memory and the one its owner wrote just before may be for
   * that one to be the turn it answers (its text becomes the first chunk's `context_text`);
   * 0: no context.
   */
  predecessorWindowSeconds: number;
}

/** The most of a predecessor's text kept as context: its end, what the reply follows. */
const CONTEXT_MAX_CHARS = 1000;

/**
 * Metadata that says which conversation a memory is a turn of: a predecessor is the turn a reply
 * answers only when both name the same one under one of these keys, or both are turns of
 * conversation imports (`ingest: "conversation"`). Facts written one after another answer nothing.
 */
const CONVERSATION_METADATA_KEYS = [
  'conversation_id',
  'session_id',
  'session',
  'thread_id',
] as const;
const CONVERSATION_KEYS = CONVERSATION_METADATA_KEYS.map((key) => `'${key}'`).join(', ');

/**
 * The owner's latest top-level memory stored before this statement (`id`, `text`, `metadata`,
 * `at`: its effective time, else its creation), leaving out the memories this write supersedes.
 */
export function latestMemoryOfOwnerSql(supersede = 'array[]::uuid[]'): string {
  return `select p.id, p.text, p.metadata, coalesce(p.effective_at, p.created_at) as at from memories p
    where p.workspace_id = :workspaceId::uuid and p.owner_type = :ownerType::text
      and p.owner_id = :ownerId::text and p.parent_memory_id is null
      and p.id <> all (${supersede})
    order by p.created_at desc, p.id desc limit 1`;
}

/**
 * SQL condition: `previous` (an alias with `metadata` and `at`) is the turn that a memory with
 * `current.metadata`, about `current.at`, answers: close enough in time and of one conversation.
 */
export function answersTurnSql(
  current: { metadata: string; at: string; windowSeconds: string },
  previous: string,
): string {
  return `abs(extract(epoch from ${previous}.at - ${current.at})) <= ${current.windowSeconds}
    and ${current.windowSeconds} > 0
    and (exists (select 1 from unnest(array[${CONVERSATION_KEYS}]) as k
        where ${current.metadata} -> k = ${previous}.metadata -> k)
      or (${current.metadata} ->> 'ingest' = 'conversation' and ${previous}.metadata ->> 'ingest' = 'conversation'))`;
}

/** The end of a predecessor's text kept as the context of the turn that answers it. */
export const contextTextSql = (text: string): string => `right(${text}, ${CONTEXT_MAX_CHARS})`;

type InsertParams = FinishParams &
  SpaceParams & {
    recheck: boolean;
    dedupedResponse: string;
    id: string;
    text: string;
    metadata: string;
    memoryType: string;
    importance: number;
    chunkProfile: string;
    lifecycleState: string;
    confidence: number;
    volatility: number;
    expiresAt: string | null;
    effectiveAt: string | null;
    contentHash: string;
    claims: string;
    claimKeys: string[];
    pinned: boolean;
    sourceWeight: number;
    priorityScore: number;
    replacedBy: string | null;
    chunks: string;
    embeddingProvider: string | null;
    embeddingDimension: number | null;
    embeddingVersion: string | null;
    predecessorWindowSeconds: number;
    supersede: string[];
    racedEvents: string;
    children: string;
    childChunks: string;
  };

/**
 * Decides and writes in one statement, so nothing in JavaScript has to look between its parts:
 * `raced` finds (when `recheck`) an identical live memory that committed while this write waited
 * for its lock; `claimed` takes the idempotency key, with the duplicate's response when raced;
 * the memory, chunks, supersessions and events, and the extraction's children (with their
 * chunks, the parent's links to them and their `extracted` events) are written when not raced
 * and the key (if any) was claimed; the audit record whenever the key (if any) was claimed.
 */
const INSERT_MEMORY = new Statement<InsertParams>(`
with raced as (
  select m.id from memories m
  where :recheck::boolean and ${IN_SPACE}
    and m.content_hash = :contentHash::text and m.lifecycle_state = 'active'
  order by m.created_at limit 1
),
claimed as (
  insert into idempotency_records (workspace_id, key, request_hash, response)
  select :workspaceId::uuid, :idempotencyKey::text, :requestHash::text,
    coalesce((select :dedupedResponse::jsonb || jsonb_build_object('memory_id', raced.id) from raced),
      :response::jsonb)
  where :idempotencyKey::text is not null
  on conflict do nothing
  returning 1
),
memory as (
  insert into memories (${MEMORY_COLUMNS}, idempotency_key, replaced_by_memory_id)
  select :id::uuid, :workspaceId::uuid, :ownerId::text, :ownerType::text, :scope::text,
    :namespace::text, :containerTag::text, :text::text, :metadata::jsonb, :memoryType::text,
    :importance::real, :chunkProfile::text, :lifecycleState::text, :confidence::real,
    :volatility::real, :expiresAt::timestamptz, :effectiveAt::timestamptz, :contentHash::text,
    :claims::jsonb, :claimKeys::text[], :pinned::boolean, :sourceWeight::real,
    :priorityScore::real, :idempotencyKey::text, :replacedBy::uuid
  where not exists (select 1 from raced)
    and (:idempotencyKey::text is null or exists (select 1 from claimed))
  returning id
),
predecessor as (
  select ${contextTextSql('latest.text')} as text from (${latestMemoryOfOwnerSql(':supersede::uuid[]')}) as latest
  where ${answersTurnSql(
    {
      metadata: '(:metadata::jsonb)',
      at: 'coalesce(:effectiveAt::timestamptz, now())',
      windowSeconds: ':predecessorWindowSeconds::float8',
    },
    'latest',
  )}
),
chunks as (
  insert into memory_chunks (memory_id, workspace_id, owner_id, owner_type, chunk_index, text,
    context_text, embedding, embedding_provider, embedding_dimension, embedding_version)
  select memory.id, :workspaceId::uuid, :ownerId::text, :ownerType::text, c.chunk_index, c.text,
    case when c.chunk_index = 0 then (select text from predecessor) end,
    c.embedding::halfvec, :embeddingProvider::text, :embeddingDimension::int, :embeddingVersion::text
  from memory, json_to_recordset(:chunks::json) as c (chunk_index int, text text, embedding text)
),
superseded as (
  update memories s set lifecycle_state = 'replaced', replaced_by_memory_id = memory.id, updated_at = now()
  from memory where s.id = any (:supersede::uuid[])
),
events as (
  ${insertEventsFromJson(':events', { from: 'memory' })}
),
raced_events as (
  ${insertEventsFromJson(':racedEvents', { from: 'raced', where: UNLESS_CLAIM_LOST, memoryId: 'raced.id' })}
),
children as (
  insert into memories (${MEMORY_COLUMNS}, parent_memory_id, replaced_by_memory_id)
  select ${RECORD_VALUES}, memory.id,
    k.replaced_by_memory_id
  from memory, jsonb_to_recordset(:children::jsonb) as k (id uuid, text text, metadata jsonb,
    memory_type text, importance real, chunk_profile text, lifecycle_state text, confidence real,
    volatility real, expires_at timestamptz, effective_at timestamptz, content_hash text,
    claims jsonb, claim_keys text[], pinned boolean, source_weight real, priority_score real,
    replaced_by_memory_id uuid)
  returning id
),
child_chunks as (
  insert into memory_chunks (memory_id, workspace_id, owner_id, owner_type, chunk_index, text,
    embedding, embedding_provider, embedding_dimension, embedding_version)
  select children.id, :workspaceId::uuid, :ownerId::text, :ownerType::text, c.chunk_index, c.text,
    c.embedding::halfvec, c.provider, c.dimension, c.version
  from children join jsonb_to_recordset(:childChunks::jsonb) as c (memory_id uuid,
    chunk_index int, text text, embedding text, provider text, dimension int, version text)
    on c.memory_id = children.id
),
child_links as (
  insert into memory_links (workspace_id, source_memory_id, target_memory_id, relation)
  select :workspaceId::uuid, memory.id, children.id, 'extracted' from memory, children
  on conflict do nothing
),
${AUDITED}
select (select id from raced) as "racedId", (select count(*) from claimed)::int as claimed`);

export type InsertOutcome =
  | { kind: 'inserted' }
  /**
   * A concurrent identical write committed first (only with `recheck`): this one stored no
   * memory; its idempotency record (the duplicate's response) and audit record are written.
   */
  | { kind: 'raced'; memoryId: string }
  /** A concurrent write claimed the idempotency key first: nothing was written. */
  | { kind: 'lost_claim' };

export interface NewMemoryWrite {
  space: MemorySpace;
  memory: MemoryRow;
  chunks: ChunkRows;
  supersede: string[];
  /**
   * Written with the memory (none when it is not): its `created`, the supersessions' `replaced`
   * and the children's `extracted`.
   */
  events: DomainEvent[];
  /** Written instead when an identical memory raced this one in: its `deduped`. */
  racedEvents: DomainEvent[];
  /** Child memories of an extraction, written with the memory (none without one). */
  children: ChildMemoryWrite[];
  /** Look again for an identical live memory (under the lock on the space's content). */
  recheck: boolean;
  /** The response to record when that look finds one, less its `memory_id`. */
  dedupedResponse: Record<string, unknown>;
  claim: WriteClaim | null;
  audit: WriteAudit;
}

function insertParams(input: NewMemoryWrite): InsertParams {
  const { space, memory, chunks } = input;
  return {
    ...finishParams(space.workspaceId, input.claim, input.audit, input.events),
    ...spaceParams(space),
    recheck: input.recheck,
    dedupedResponse: JSON.stringify(input.dedupedResponse),
    id: memory.id,
    text: memory.text,
    metadata: JSON.stringify(memory.metadata),
    memoryType: memory.memoryType,
    importance: memory.importance,
    chunkProfile: memory.chunkProfile,
    lifecycleState: memory.lifecycleState,
    confidence: memory.confidence,
    volatility: memory.volatility,
    expiresAt: memory.expiresAt?.toISOString() ?? null,
    effectiveAt: memory.effectiveAt?.toISOString() ?? null,
    contentHash: memory.contentHash,
    claims: JSON.stringify(memory.claims),
    claimKeys: memory.claimKeys,
    pinned: memory.pinned,
    sourceWeight: memory.sourceWeight,
    priorityScore: memory.priorityScore,
    replacedBy: memory.replacedByMemoryId,
    chunks: JSON.stringify(
      chunks.texts.map((text, index) => ({
        chunk_index: index,
        text,
        embedding: chunks.vectors[index] ? halfvecLiteral(chunks.vectors[index]) : null,
      })),
    ),
    embeddingProvider: chunks.provider,
    embeddingDimension: chunks.dimension,
    embeddingVersion: chunks.version,
    predecessorWindowSeconds: chunks.predecessorWindowSeconds,
    supersede: input.supersede,
    racedEvents: eventRecords(input.racedEvents),
    children: JSON.stringify(input.children.map(({ memory: child }) => childColumns(child))),
    childChunks: JSON.stringify(input.children.flatMap(childChunkRecords)),
  };
}

/** A chunk as the statements' chunk records read it. */
export type ChunkRecord = {
  memory_id: string;
  chunk_index: number;
  text: string;
  embedding: string | null;
  provider: string | null;
  dimension: number | null;
  version: string | null;
};

/** A child's chunks as chunk records. */
export function childChunkRecords(child: ChildMemoryWrite): ChunkRecord[] {
  return child.chunks.map((chunk) => ({
    memory_id: child.memory.id,
    chunk_index: chunk.chunkIndex,
    text: chunk.text,
    embedding: chunk.embedding ? halfvecLiteral(chunk.embedding) : null,
    provider: chunk.embeddingProvider ?? null,
    dimension: chunk.embeddingDimension ?? null,
    version: chunk.embeddingVersion ?? null,
  }));
}

/** A child's columns as `children` of {@link INSERT_MEMORY} reads them, the table's defaults filled in. */
export function childColumns(child: ChildMemoryWrite['memory']) {
  return {
    id: child.id,
    text: child.text,
    metadata: child.metadata ?? {},
    memory_type: child.memoryType ?? 'note',
    importance: child.importance ?? DEFAULT_IMPORTANCE,
    chunk_profile: child.chunkProfile ?? 'balanced',
    lifecycle_state: child.lifecycleState ?? 'active',
    confidence: child.confidence ?? null,
    volatility: child.volatility ?? null,
    expires_at: child.expiresAt ?? null,
    effective_at: child.effectiveAt ?? null,
    content_hash: child.contentHash,
    claims: child.claims ?? [],
    claim_keys: child.claimKeys ?? [],
    pinned: child.pinned ?? false,
    source_weight: child.sourceWeight ?? 1,
    priority_score: child.priorityScore ?? null,
    replaced_by_memory_id: child.replacedByMemoryId ?? null,
  };
}

function insertOutcome(
  row: Record<string, unknown> | undefined,
  claim: WriteClaim | null,
): InsertOutcome {
  const { racedId, claimed } = (row ?? {}) as { racedId?: string | null; claimed?: number };
  if (claim && !claimed) return { kind: 'lost_claim' };
  if (racedId) return { kind: 'raced', memoryId: racedId };
  return { kind: 'inserted' };
}

/**
 * The whole of a new memory in one statement: the memory (holding the claim's idempotency key),
 * its chunks, the supersessions it decides and their lifecycle events, the idempotency record
 * and the request's audit record. Runs inside the caller's transaction, after its lock.
 */
export async function insertMemory(db: Queryable, input: NewMemoryWrite): Promise<InsertOutcome> {
  const [row] = await INSERT_MEMORY.run(db, insertParams(input));
  return insertOutcome(row, input.claim);
}

/**
 * {@link insertMemory} in a transaction of its own after the lock on the space's content: on PostgreSQL
 * `begin`, the lock, the write and `commit` share one round trip. The write's statement starts
 * (and takes its snapshot) once the lock is held, so its recheck sees an identical write that
 * committed while this one waited.
 */
export async function insertMemoryLocked(
  db: Writer,
  input: NewMemoryWrite,
): Promise<InsertOutcome> {
  const [, rows] = await inOneTrip(db, [
    step(LOCK_SPACE_CONTENT, { key: spaceContentKey(input.space, input.memory.contentHash) }),
    step(INSERT_MEMORY, insertParams(input)),
  ]);
  return insertOutcome(rows?.[0], input.claim);
}

/** A child memory of an extraction and its chunks, as the planner builds them. */
export interface ChildMemoryWrite {
  memory: NewMemory & { id: string };
  chunks: Array<Omit<NewMemoryChunk, 'memoryId'>>;
}

const GET_IDEMPOTENCY_RECORD = new Statement<{ workspaceId: string; key: string }>(`
select i.request_hash as "requestHash", i.response from idempotency_records i
where i.workspace_id = :workspaceId::uuid and i.key = :key::text`);

export async function getIdempotencyRecord(
  db: Reader,
  workspaceId: string,
  key: string,
): Promise<{ requestHash: string; response: Record<string, unknown> } | undefined> {
  const [row] = await GET_IDEMPOTENCY_RECORD.read<{
    requestHash: string;
    response: Record<string, unknown>;
  }>(db, {
    workspaceId,
    key,
  });
  return row;
}

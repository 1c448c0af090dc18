import { z } from 'zod';
import { boundedText, IsoTimestamp, Metadata, MemoryType, OwnerType } from './common.js';
import { INPUT_BOUNDS, LIMITS } from './limits.js';
import { ChunkProfile, LifecycleState } from './memories.js';

/**
 * Owner export, import and erasure (docs/export.md). An export is JSON Lines: a header line, one
 * line per memory (with its chunks, lifecycle history, links and profile pin), and an end line
 * carrying the cursor to resume from. The same lines are what import reads.
 */

/** The `format` of the header line: what this file is. */
export const EXPORT_FORMAT = 'mnemo-export';
/** The version of the line format; an importer refuses versions it does not know. */
export const EXPORT_FORMAT_VERSION = 1;
/** The media type of an export and of an import body. */
export const JSONL_CONTENT_TYPE = 'application/x-ndjson';
/** Memories one export response holds at most (`limit`); the end line says where to go on. */
export const MAX_EXPORT_LIMIT = 10_000;

const OwnerId = boundedText(INPUT_BOUNDS.ownerId);
const Label = boundedText(INPUT_BOUNDS.label).nullable();
const Timestamp = IsoTimestamp;
const Uuid = z.string().uuid();
const BooleanQuery = z.enum(['true', 'false']).transform((value) => value === 'true');

export const ExportQuery = z
  .object({
    /** The owner to export (default type `user`); or `all_owners=true` for the whole workspace. */
    owner_id: OwnerId.optional(),
    owner_type: OwnerType.optional(),
    all_owners: BooleanQuery.optional(),
    /** The cursor: the last memory id already exported (the end line's `next_after`). */
    after: Uuid.optional(),
    /** At most this many memories in this response (default: all). */
    limit: z.coerce.number().int().min(1).max(MAX_EXPORT_LIMIT).optional(),
    /** Include chunk embeddings (default true); without them the importer embeds again. */
    embeddings: BooleanQuery.optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.all_owners === true && value.owner_id !== undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['all_owners'],
        message: 'give owner_id or all_owners=true, not both',
      });
    }
    if (value.all_owners !== true && value.owner_id === undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['owner_id'],
        message: 'required unless all_owners=true',
      });
    }
  });
export type ExportQuery = z.infer<typeof ExportQuery>;

export const ExportHeader = z
  .object({
    type: z.literal('header'),
    format: z.literal(EXPORT_FORMAT),
    version: z.number().int().min(1),
    exported_at: Timestamp,
    /** The owner exported; null: every owner of the workspace. */
    owner: z.object({ owner_id: OwnerId, owner_type: OwnerType }).nullable(),
    /** Whether chunk lines carry their embeddings. */
    embeddings: z.boolean(),
    /** The cursor this response started after (null: from the first memory). */
    after: Uuid.nullable(),
  })
  .passthrough();
export type ExportHeader = z.infer<typeof ExportHeader>;

export const ExportChunk = z
  .object({
    id: Uuid,
    chunk_index: z.number().int().min(0).max(100_000),
    text: boundedText(LIMITS.memoryText),
    /** Absent or null: embedded again on import. */
    embedding: z.array(z.number().finite()).min(1).max(16_384).nullable().optional(),
    embedding_provider: boundedText({ min: 0, max: 256 }).nullable(),
    embedding_dimension: z.number().int().min(1).max(16_384).nullable(),
    embedding_version: boundedText({ min: 0, max: 256 }).nullable(),
    created_at: Timestamp,
  })
  .strict()
  .superRefine((chunk, ctx) => {
    if (Array.isArray(chunk.embedding) && chunk.embedding.length !== chunk.embedding_dimension) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['embedding'],
        message: 'length must equal embedding_dimension',
      });
    }
  });
export type ExportChunk = z.infer<typeof ExportChunk>;

/** Event kinds a memory's history holds (as the outbox names them). */
export const EXPORTED_EVENT_KINDS = [
  'created',
  'extracted',
  'deduped',
  'replaced',
  'merged',
  'archived',
  'deleted',
] as const;

export const ExportEvent = z
  .object({
    id: Uuid,
    kind: z.enum(EXPORTED_EVENT_KINDS),
    rule: boundedText({ min: 1, max: 256 }),
    related_memory_id: Uuid.nullable(),
    details: z.record(z.unknown()),
    created_at: Timestamp,
  })
  .strict();
export type ExportEvent = z.infer<typeof ExportEvent>;

/** A link with this memory at either end: it appears in both memories' lines. */
export const ExportLink = z
  .object({
    id: Uuid,
    source_memory_id: Uuid,
    target_memory_id: Uuid,
    relation: boundedText({ min: 1, max: 64 }),
    created_at: Timestamp,
  })
  .strict();
export type ExportLink = z.infer<typeof ExportLink>;

export const ExportClaim = z.object({
  subject: boundedText({ min: 0, max: 1_000 }),
  attribute: boundedText({ min: 0, max: 1_000 }),
  value: boundedText({ min: 0, max: 10_000 }),
});

export const ExportMemory = z
  .object({
    type: z.literal('memory'),
    id: Uuid,
    owner_id: OwnerId,
    owner_type: OwnerType,
    scope: Label,
    namespace: Label,
    container_tag: Label,
    text: boundedText(LIMITS.memoryText),
    metadata: Metadata,
    memory_type: MemoryType,
    importance: z.number().min(LIMITS.importance.min).max(LIMITS.importance.max),
    chunk_profile: ChunkProfile,
    lifecycle_state: LifecycleState,
    archive_rule: boundedText({ min: 0, max: 64 }).nullable(),
    confidence: z.number().finite().nullable(),
    volatility: z.number().finite().nullable(),
    expires_at: Timestamp.nullable(),
    effective_at: Timestamp.nullable(),
    content_hash: boundedText({ min: 1, max: 256 }),
    feedback_score: z.number().finite(),
    claims: z.array(ExportClaim).max(1_000),
    /** `subject|attribute` of the claims conflict resolution compares (may be fewer than claims). */
    claim_keys: z.array(boundedText({ min: 0, max: 2_000 })).max(1_000),
    pinned: z.boolean(),
    source_weight: z.number().finite(),
    priority_score: z.number().finite().nullable(),
    idempotency_key: boundedText(LIMITS.idempotencyKey).nullable(),
    /** The memory this one was extracted from. */
    parent_memory_id: Uuid.nullable(),
    /** The memories extracted from this one (the other side of `parent_memory_id`). */
    child_memory_ids: z.array(Uuid).max(1_000),
    replaced_by_memory_id: Uuid.nullable(),
    /** The memories this one replaced (the other side of `replaced_by_memory_id`). */
    replaces_memory_ids: z.array(Uuid).max(10_000),
    created_at: Timestamp,
    updated_at: Timestamp,
    chunks: z.array(ExportChunk).max(10_000),
    /** The lifecycle history, oldest first. */
    events: z.array(ExportEvent).max(10_000),
    links: z.array(ExportLink).max(10_000),
    /** The owner's profile pin of this memory (PATCH /v1/profile/pins), if pinned. */
    profile_pin: z.object({ id: Uuid, created_at: Timestamp }).strict().nullable(),
  })
  .strict();
export type ExportMemory = z.infer<typeof ExportMemory>;

export const ExportEnd = z
  .object({
    type: z.literal('end'),
    /** Memory lines in this response. */
    memories: z.number().int().min(0),
    /** True when nothing is left after this response. */
    complete: z.boolean(),
    /** The cursor to resume from (`after=`): the last memory id of this response. */
    next_after: Uuid.nullable(),
  })
  .strict();
export type ExportEnd = z.infer<typeof ExportEnd>;

/** One line of an export file (or of an import body). */
export const ExportLine = z.discriminatedUnion('type', [ExportHeader, ExportMemory, ExportEnd]);
export type ExportLine = z.infer<typeof ExportLine>;

/** The export response as OpenAPI shows it: JSON Lines, one {@link ExportLine} per line. */
export const ExportStream = z
  .string()
  .describe(
    'JSON Lines: a header line, one memory line per memory (id order), then an end line with the cursor (`next_after`). See docs/export.md.',
  );

export const ImportQuery = z
  .object({
    /**
     * Added to the body's line numbers after its header line, when a client sends one file as
     * several requests (each starting with the header): errors then name the file's lines.
     */
    line_offset: z.coerce.number().int().min(0).max(1_000_000_000).optional(),
  })
  .strict();
export type ImportQuery = z.infer<typeof ImportQuery>;

/** The import body as OpenAPI shows it: the lines of an export. */
export const ImportBody = z
  .string()
  .describe(
    'JSON Lines as an export writes them (content type application/x-ndjson): the header line first, then memory lines; an end line is optional. See docs/export.md.',
  );

const Counts = z.object({
  memories: z.number().int().min(0),
  chunks: z.number().int().min(0),
  events: z.number().int().min(0),
  links: z.number().int().min(0),
  pins: z.number().int().min(0),
});

export const ImportResponse = z.object({
  /** Rows written by this request. */
  imported: Counts,
  /** Memories already in the workspace (an earlier import of the same lines): left as they are. */
  skipped: z.number().int().min(0),
  /** Memories stored under another id because theirs is used elsewhere on this server. */
  remapped: z.number().int().min(0),
  /** Chunks embedded again (no embedding in the file, or another embedder's). */
  reembedded: z.number().int().min(0),
  /** Memory lines read. */
  lines: z.number().int().min(0),
  /** Transactions committed, one per batch of memory lines. */
  batches: z.number().int().min(0),
  /** False when the request deadline stopped the import: send again from `resume_line`. */
  complete: z.boolean(),
  /** The first line not imported (in the file's numbering), when `complete` is false. */
  resume_line: z.number().int().min(1).optional(),
});
export type ImportResponse = z.infer<typeof ImportResponse>;

export const ErasePayload = z
  .object({
    owner_id: OwnerId,
    /** Default `user`. */
    owner_type: OwnerType.optional(),
  })
  .strict();
export type ErasePayload = z.infer<typeof ErasePayload>;

/** Rows erased, per table. */
export const ERASED_TABLES = [
  'memories',
  'memory_chunks',
  'memory_links',
  'memory_pins',
  'domain_events',
  'learning_signals',
  'saved_searches',
  'context_feedback',
  'idempotency_records',
  'audit_log',
] as const;

export const ErasureReceipt = z.object({
  /** The receipt's id (also the id of the `erased` event in the outbox). */
  receipt_id: Uuid,
  owner_id: z.string(),
  owner_type: OwnerType,
  /** When the erasure committed. */
  erased_at: z.string(),
  /** Rows deleted per table (`audit_log`: rows whose path named an erased memory, redacted). */
  counts: z.object(
    Object.fromEntries(ERASED_TABLES.map((table) => [table, z.number().int().min(0)])) as Record<
      (typeof ERASED_TABLES)[number],
      z.ZodNumber
    >,
  ),
  /** True when nothing was left to erase and this is the receipt of the earlier erasure. */
  replayed: z.boolean(),
});
export type ErasureReceipt = z.infer<typeof ErasureReceipt>;

import { z } from 'zod';
import {
  boundedText,
  IsoTimestamp,
  Metadata,
  MemoryType,
  OwnerFields,
  OwnerType,
  PageFields,
  ScopeFields,
  checkOwnerAliases,
} from './common.js';
import { INPUT_BOUNDS, LIMITS } from './limits.js';

/** Chunking presets of a write: `balanced` is the default. */
export const CHUNK_PROFILES = ['balanced', 'dense', 'document'] as const;
export const ChunkProfile = z.enum(CHUNK_PROFILES);
export type ChunkProfile = z.infer<typeof ChunkProfile>;

/** The fields of a memory write, before the owner-alias check (MCP tools reuse this shape). */
export const MemoryInsertFields = OwnerFields.merge(ScopeFields).extend({
  text: boundedText(LIMITS.memoryText),
  metadata: Metadata.optional(),
  memory_type: MemoryType.optional(),
  /** Ranking multiplier: higher raises retrieval likelihood; DEFAULT_IMPORTANCE when absent. */
  importance: z.number().min(LIMITS.importance.min).max(LIMITS.importance.max).optional(),
  chunk_profile: ChunkProfile.optional(),
  /** Default true: extract atomic child memories when plan and budget allow. */
  extract: z.boolean().optional(),
  /** When the fact became true; orders conflicting facts. */
  effective_at: IsoTimestamp.optional(),
  replaces_memory_id: z.string().uuid().optional(),
  idempotency_key: boundedText(LIMITS.idempotencyKey).optional(),
});

export const MemoryInsertPayload = MemoryInsertFields.superRefine(checkOwnerAliases);
export type MemoryInsertPayload = z.infer<typeof MemoryInsertPayload>;

export const EXTRACTION_STATUSES = ['run', 'degraded', 'skipped'] as const;
export const EXTRACTION_REASONS = [
  'user_disabled',
  'low_importance',
  'plan_limit',
  'entitlement_degraded',
  'budget_limit',
  'extraction_error',
  'none',
] as const;

export const ExtractionOutcome = z.object({
  status: z.enum(EXTRACTION_STATUSES),
  reason: z.enum(EXTRACTION_REASONS).optional(),
  error: z.string().optional(),
});

export const PII_HINTS = ['email', 'phone'] as const;

/** Lifecycle facts about a newly inserted memory; the spec fixes the names, not which are present. */
export const MemoryIntelligence = z.object({
  /** SHA-256 of the canonical text (NFKC, lower case, punctuation and spacing folded). */
  canonical_hash: z.string(),
  confidence: z.number().optional(),
  source_weight: z.number().optional(),
  priority_score: z.number().optional(),
  priority_tier: z.string().optional(),
  auto_pinned: z.boolean().optional(),
  /** `resolved` when this write superseded another memory. */
  conflict_state: z.enum(['none', 'resolved']).optional(),
});

export const MemoryInsertResponse = z.object({
  memory_id: z.string(),
  stored: z.literal(true),
  extraction: ExtractionOutcome,
  deduped: z.boolean().optional(),
  dedupe_kind: z.enum(['near', 'semantic']).optional(),
  /** Number of search-indexed chunks; omitted when embedding was skipped. */
  chunks: z.number().int().min(0).optional(),
  embedding: z.literal('skipped_due_to_budget').optional(),
  safety: z.object({ pii_hints: z.array(z.enum(PII_HINTS)) }).optional(),
  intelligence: MemoryIntelligence.optional(),
  superseded_memory_id: z.string().uuid().optional(),
  trace: z
    .object({
      memory_evolution: z.string(),
      memory_evolution_applied: z.boolean(),
    })
    .optional(),
});
export type MemoryInsertResponse = z.infer<typeof MemoryInsertResponse>;

export const LIFECYCLE_STATES = ['active', 'replaced', 'archived'] as const;
export const LifecycleState = z.enum(LIFECYCLE_STATES);

/** Why a memory's lifecycle changed: the rule, and the other memory involved. */
export const LifecycleEvent = z.object({
  /** replaced, merged, archived, extracted */
  event: z.string(),
  /** replaces_memory_id, conflict, conflict_older, correction, evolution, expiry, hygiene_duplicate, extractor:<name> */
  rule: z.string(),
  related_memory_id: z.string().uuid().nullable(),
  details: z.record(z.unknown()),
  at: z.string(),
});
export type LifecycleEvent = z.infer<typeof LifecycleEvent>;

/** A stored memory as reads return it. */
export const Memory = z.object({
  id: z.string().uuid(),
  text: z.string(),
  owner_id: z.string(),
  owner_type: OwnerType,
  scope: z.string().nullable(),
  namespace: z.string().nullable(),
  containerTag: z.string().nullable(),
  metadata: Metadata,
  memory_type: MemoryType,
  importance: z.number(),
  chunk_profile: ChunkProfile,
  lifecycle_state: LifecycleState,
  confidence: z.number().nullable(),
  volatility: z.number().nullable(),
  expires_at: z.string().nullable(),
  effective_at: z.string().nullable(),
  parent_memory_id: z.string().uuid().nullable(),
  replaced_by_memory_id: z.string().uuid().nullable(),
  pinned: z.boolean(),
  source_weight: z.number(),
  priority_score: z.number().nullable(),
  /** Facts the text states, as conflict resolution reads them. */
  claims: z.array(z.object({ subject: z.string(), attribute: z.string(), value: z.string() })),
  lifecycle_events: z.array(LifecycleEvent),
  chunks: z.number().int().min(0),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Memory = z.infer<typeof Memory>;

const queryInt = (min: number, max?: number) => {
  const base = z.coerce.number({ invalid_type_error: 'must be an integer' }).int().min(min);
  return max === undefined ? base : base.max(max);
};

/** A JSON-encoded object of scalar values, as a query parameter. */
export const MetadataQuery = z.string().transform((raw, ctx) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be a JSON-encoded object' });
    return z.NEVER;
  }
  const result = Metadata.safeParse(parsed);
  if (!result.success) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'must be a JSON object whose values are string, number, boolean or null',
    });
    return z.NEVER;
  }
  return result.data;
});

export const ListMemoriesQuery = z
  .object({
    user_id: boundedText(INPUT_BOUNDS.ownerId).optional(),
    owner_id: boundedText(INPUT_BOUNDS.ownerId).optional(),
    entity_id: boundedText(INPUT_BOUNDS.ownerId).optional(),
    owner_type: OwnerType.optional(),
    entity_type: OwnerType.optional(),
    namespace: boundedText(INPUT_BOUNDS.label).optional(),
    page: queryInt(INPUT_BOUNDS.page.min, INPUT_BOUNDS.page.max).optional(),
    page_size: queryInt(LIMITS.listPageSize.min, LIMITS.listPageSize.max).optional(),
    memory_type: MemoryType.optional(),
    metadata: MetadataQuery.optional(),
    start_time: IsoTimestamp.optional(),
    end_time: IsoTimestamp.optional(),
    parent_memory_id: z
      .string()
      .uuid()
      .optional()
      .describe(
        'Only the memories extracted from this one (their parent_memory_id). The owner rule still applies: give the parent’s owner.',
      ),
    // One owner rule for every call: no owner id is the default owner. Listing every owner is asked for.
    all_owners: z
      .enum(['true', 'false', '1', '0'])
      .transform((value) => value === 'true' || value === '1')
      .optional()
      .describe(
        'true: list the memories of every owner of the workspace (owner_type still filters). Without it, no owner id lists the default owner, as writes and searches without one use it.',
      ),
  })
  .superRefine((query, ctx) => {
    checkOwnerAliases(query, ctx);
    if (query.all_owners && (query.user_id ?? query.owner_id ?? query.entity_id) !== undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['all_owners'],
        message: 'all_owners lists every owner: give it without user_id, owner_id or entity_id',
      });
    }
  });
export type ListMemoriesQuery = z.infer<typeof ListMemoriesQuery>;

export const ListMemoriesResponse = PageFields.extend({
  results: z.array(Memory),
  page_size: z.number().int().min(1),
});
export type ListMemoriesResponse = z.infer<typeof ListMemoriesResponse>;

export const MemoryIdParams = z.object({ id: boundedText(INPUT_BOUNDS.memoryId) });

export const DeleteMemoryResponse = z.object({
  id: z.string(),
  deleted: z.literal(true),
  // The delete cascades (spec: to chunks and links); extracted child memories go too, said here.
  deleted_children: z
    .array(z.string())
    .describe(
      'Ids of the memories extracted from this one (parent_memory_id), deleted with it; chunks and links of all of them are deleted too.',
    ),
});
export type DeleteMemoryResponse = z.infer<typeof DeleteMemoryResponse>;

import { z } from 'zod';
import {
  boundedText,
  IsoTimestamp,
  Metadata,
  MemoryType,
  OwnerFields,
  PageFields,
  PageNumber,
  ScopeFields,
  checkOwnerAliases,
} from './common.js';
import { INPUT_BOUNDS, LIMITS } from './limits.js';

/** Which recalls a search runs: `hybrid` (vector and keyword, fused) is the default. */
export const SEARCH_MODES = ['hybrid', 'vector', 'keyword'] as const;
export const SearchMode = z.enum(SEARCH_MODES);
export type SearchMode = z.infer<typeof SearchMode>;

/** Ranking presets of a search: `balanced` is the default. */
export const RETRIEVAL_PROFILES = ['balanced', 'recall', 'precision'] as const;
export const RetrievalProfile = z.enum(RETRIEVAL_PROFILES);
export type RetrievalProfile = z.infer<typeof RetrievalProfile>;

/** How metadata filter entries combine: `and` is the default. */
export const FILTER_MODES = ['and', 'or'] as const;
export const FilterMode = z.enum(FILTER_MODES);

/** The explicit signal of POST /v1/feedback. */
export const FEEDBACK_VALUES = ['positive', 'negative'] as const;
export const FeedbackValue = z.enum(FEEDBACK_VALUES);
export type FeedbackValue = z.infer<typeof FeedbackValue>;

/**
 * A metadata filter: {@link Metadata}, bounded in entries and size (`INPUT_BOUNDS.filterMetadata`).
 * The bounds are checked before the entries are parsed (fatal issues stop the parse): parsing
 * 32,768 entries takes about a second.
 */
export const FilterMetadata = z.preprocess(
  (metadata, ctx) => {
    if (typeof metadata !== 'object' || metadata === null) return metadata;
    const { maxKeys, maxBytes } = INPUT_BOUNDS.filterMetadata;
    const keys = Object.keys(metadata).length;
    if (keys > maxKeys) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `has ${keys} entries; at most ${maxKeys}`,
        fatal: true,
      });
      return metadata;
    }
    const bytes = new TextEncoder().encode(JSON.stringify(metadata)).length;
    if (bytes > maxBytes) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `is ${bytes} bytes as JSON; at most ${maxBytes}`,
        fatal: true,
      });
    }
    return metadata;
  },
  Metadata.describe(
    `At most ${INPUT_BOUNDS.filterMetadata.maxKeys} entries and ${INPUT_BOUNDS.filterMetadata.maxBytes} bytes as JSON.`,
  ),
);

export const SearchFilters = z
  .object({
    metadata: FilterMetadata.optional(),
    start_time: IsoTimestamp.optional(),
    end_time: IsoTimestamp.optional(),
    /** One memory type or a non-empty array of them (OR semantics). */
    memory_type: z.union([MemoryType, z.array(MemoryType).nonempty()]).optional(),
    /** How metadata entries combine; default `and`. */
    filter_mode: FilterMode.optional(),
  })
  // Unknown filter keys are refused: a misspelt filter must not silently widen the search.
  .strict()
  .superRefine((filters, ctx) => {
    if (filters.start_time && filters.end_time) {
      if (Date.parse(filters.start_time) > Date.parse(filters.end_time)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['end_time'],
          message: 'must not be before start_time',
        });
      }
    }
  });
export type SearchFilters = z.infer<typeof SearchFilters>;

/** The fields of a search or context call, before the owner-alias check. */
export const SearchFields = OwnerFields.merge(ScopeFields).extend({
  query: boundedText(LIMITS.query),
  top_k: z.number().int().min(LIMITS.topK.min).max(LIMITS.topK.max).optional(),
  page: PageNumber.optional(),
  page_size: z
    .number()
    .int()
    .min(LIMITS.searchPageSize.min)
    .max(LIMITS.searchPageSize.max)
    .optional(),
  filters: SearchFilters.optional(),
  /** Accepted for compatibility but not honoured: search never returns explanations for it. */
  explain: z.boolean().optional(),
  search_mode: SearchMode.optional(),
  min_score: z.number().min(LIMITS.minScore.min).max(LIMITS.minScore.max).optional(),
  retrieval_profile: RetrievalProfile.optional(),
});

export const SearchPayload = SearchFields.superRefine(checkOwnerAliases);
export type SearchPayload = z.infer<typeof SearchPayload>;

/** The fields of a context call: a search's, and the size of the prompt block it may fill. */
export const ContextFields = SearchFields.extend({
  /**
   * Extension of the spec: the most the context text may hold, in tokens (about four characters
   * each). The most relevant memories that fit are packed in, none twice. Default: about 2,000.
   */
  max_tokens: z
    .number()
    .int()
    .min(LIMITS.contextTokens.min)
    .max(LIMITS.contextTokens.max)
    .optional(),
});
export const ContextPayload = ContextFields.superRefine(checkOwnerAliases);
export type ContextPayload = z.infer<typeof ContextPayload>;

export const SearchExplain = z.object({
  rrf_score: z.number(),
  match_sources: z.array(z.enum(['vector', 'text'])),
  vector_score: z.number().optional(),
  text_score: z.number().optional(),
});

/** Another member of a result's fact (its extraction parent or sibling) that also matched. */
export const RelatedResult = z.object({
  chunk_id: z.string(),
  memory_id: z.string(),
  chunk_index: z.number().int(),
  text: z.string(),
  score: z.number(),
});

export const SearchResultItem = z.object({
  chunk_id: z.string(),
  memory_id: z.string(),
  chunk_index: z.number().int(),
  text: z.string(),
  score: z.number(),
  /**
   * Extension of the spec: a memory and the memories extracted from it are one fact and one
   * result (its best-scoring member); the other members that matched are listed here, best first.
   * Absent when no other member matched.
   */
  related: z.array(RelatedResult).optional(),
  _explain: SearchExplain.optional(),
});
export type SearchResultItem = z.infer<typeof SearchResultItem>;

export const SearchResponse = PageFields.extend({
  results: z.array(SearchResultItem),
  /** Allowed by the schema; the service does not send it in the body. */
  retrieval_trace: z.record(z.unknown()).optional(),
});
export type SearchResponse = z.infer<typeof SearchResponse>;

export const Citation = z.object({
  i: z.number().int(),
  chunk_id: z.string(),
  memory_id: z.string(),
  chunk_index: z.number().int(),
});

export const ContextResponse = PageFields.extend({
  context_text: z.string(),
  citations: z.array(Citation),
  context_blocks: z.number().int().min(0).optional(),
});
export type ContextResponse = z.infer<typeof ContextResponse>;

export const FeedbackPayload = z.object({
  feedback: FeedbackValue,
  /** The x-request-id of the earlier search or context call. */
  request_id: boundedText(LIMITS.feedbackRequestId),
});
export type FeedbackPayload = z.infer<typeof FeedbackPayload>;

export const FeedbackResponse = z.object({
  request_id: z.string(),
  feedback: FeedbackValue,
  /** Number of memories the signal was applied to (0 when the request id is unknown). */
  applied: z.number().int().min(0),
});
export type FeedbackResponse = z.infer<typeof FeedbackResponse>;

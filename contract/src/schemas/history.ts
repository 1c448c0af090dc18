import { z } from 'zod';
import { boundedText, IsoTimestamp, OwnerType, PageFields, PgString } from './common.js';
import { INPUT_BOUNDS, LIMITS } from './limits.js';
import { FeedbackValue, SearchResponse } from './search.js';

/** Page size of the search history: default 20, at most 100. */
export const HISTORY_PAGE_SIZE = { default: 20, max: 100 } as const;

const queryInt = (min: number, max: number) =>
  z.coerce.number({ invalid_type_error: 'must be an integer' }).int().min(min).max(max);

/** An owner id: at most 256 characters, like the owner ids of writes and searches. */
const OwnerId = boundedText(INPUT_BOUNDS.ownerId);

export const SearchHistoryQuery = z
  .object({
    page: queryInt(INPUT_BOUNDS.page.min, INPUT_BOUNDS.page.max).optional(),
    page_size: queryInt(1, HISTORY_PAGE_SIZE.max).optional(),
    /** Only queries of this owner id (any owner type unless `owner_type` is given). */
    owner_id: OwnerId.optional(),
    owner_type: OwnerType.optional(),
    /** Only queries saved at or after this instant. */
    since: IsoTimestamp.optional(),
  })
  .strict();
export type SearchHistoryQuery = z.infer<typeof SearchHistoryQuery>;

export const SavedQuery = z.object({
  /** Names the query for POST /v1/search/replay. */
  query_id: z.string().uuid(),
  /** The x-request-id of the search that saved it. */
  request_id: z.string(),
  owner_id: z.string(),
  owner_type: z.string(),
  query: z.string(),
  /** The search payload as sent. */
  payload: z.record(z.unknown()),
  created_at: z.string(),
});
export type SavedQuery = z.infer<typeof SavedQuery>;

export const SearchHistoryResponse = PageFields.extend({
  /** Newest first. */
  results: z.array(SavedQuery),
  page_size: z.number().int().min(1),
});
export type SearchHistoryResponse = z.infer<typeof SearchHistoryResponse>;

export const ReplaySearchPayload = z.object({ query_id: z.string().uuid() }).strict();
export type ReplaySearchPayload = z.infer<typeof ReplaySearchPayload>;

/** A search response, for the saved query named. */
export const ReplaySearchResponse = SearchResponse.extend({ query_id: z.string().uuid() });
export type ReplaySearchResponse = z.infer<typeof ReplaySearchResponse>;

/** Memory ids one context feedback may name per list (citations of one context call and more). */
export const CONTEXT_FEEDBACK_MAX_IDS = 100;
/** Longest comment of a context feedback, in characters. */
export const CONTEXT_FEEDBACK_MAX_COMMENT = 2000;

const MemoryIds = z.array(z.string().uuid()).max(CONTEXT_FEEDBACK_MAX_IDS);

export const ContextFeedbackPayload = z
  .object({
    /** The x-request-id of the earlier POST /v1/context call. */
    request_id: PgString.pipe(
      z.string().min(LIMITS.feedbackRequestId.min).max(LIMITS.feedbackRequestId.max),
    ),
    /** Applied like POST /v1/feedback to the memories the context call ranked. */
    rating: FeedbackValue.optional(),
    /** Memories of the context that helped (kept on the feedback row). */
    helpful_memory_ids: MemoryIds.optional(),
    /** Memories of the context that did not help (kept on the feedback row). */
    unhelpful_memory_ids: MemoryIds.optional(),
    comment: PgString.pipe(z.string().min(1).max(CONTEXT_FEEDBACK_MAX_COMMENT)).optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    const said =
      value.rating !== undefined ||
      (value.helpful_memory_ids?.length ?? 0) > 0 ||
      (value.unhelpful_memory_ids?.length ?? 0) > 0 ||
      value.comment !== undefined;
    if (!said) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['rating'],
        message: 'give a rating, memory ids or a comment',
      });
    }
    const helpful = new Set(value.helpful_memory_ids ?? []);
    const both = (value.unhelpful_memory_ids ?? []).filter((id) => helpful.has(id));
    if (both.length > 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['unhelpful_memory_ids'],
        message: `also listed as helpful: ${both.join(', ')}`,
      });
    }
  });
export type ContextFeedbackPayload = z.infer<typeof ContextFeedbackPayload>;

export const ContextFeedbackResponse = z.object({
  feedback_id: z.string().uuid(),
  request_id: z.string(),
  rating: FeedbackValue.nullable(),
  /** Memories the rating was applied to (0 without a rating). */
  applied: z.number().int().min(0),
  helpful_memory_ids: z.array(z.string()),
  unhelpful_memory_ids: z.array(z.string()),
  comment: z.string().nullable(),
  created_at: z.string(),
});
export type ContextFeedbackResponse = z.infer<typeof ContextFeedbackResponse>;

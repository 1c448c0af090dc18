import {
  HISTORY_PAGE_SIZE,
  LIMITS,
  SearchPayload,
  type ContextFeedbackPayload,
  type ContextFeedbackResponse,
  type FeedbackValue,
  type ReplaySearchResponse,
  type SearchHistoryQuery,
  type SearchHistoryResponse,
} from '@mnemo/contract';
import type { Database } from '../../db/client.js';
import {
  insertContextFeedback,
  listSavedSearches,
  savedSearchById,
} from '../../db/queries/history.js';
import type { EventOutbox } from '../../db/queries/events.js';
import { memoryHeads } from '../../db/queries/links.js';
import { latestSignalForRequest } from '../../db/queries/signals.js';
import { ServiceError } from '../../errors.js';
import { estimateQueryCost, type AiPrices } from '../ai-cost.js';
import type { BackgroundTasks } from '../background.js';
import { applyFeedbackIn } from './feedback.js';
import { searchMemories, type SearchDeps } from './search.js';

/** GET /v1/search/history: saved searches of the workspace, newest first. */
export async function listSearchHistory(
  db: Database,
  workspaceId: string,
  query: SearchHistoryQuery,
): Promise<SearchHistoryResponse> {
  const page = query.page ?? 1;
  const pageSize = query.page_size ?? HISTORY_PAGE_SIZE.default;
  const { rows, total } = await listSavedSearches(
    db,
    {
      workspaceId,
      ...(query.owner_id !== undefined ? { ownerId: query.owner_id } : {}),
      ...(query.owner_type !== undefined ? { ownerType: query.owner_type } : {}),
      ...(query.since !== undefined ? { since: new Date(query.since) } : {}),
    },
    { limit: pageSize, offset: (page - 1) * pageSize },
  );
  return {
    results: rows.map((row) => ({
      query_id: row.id,
      request_id: row.requestId,
      owner_id: row.ownerId,
      owner_type: row.ownerType,
      query: row.query,
      payload: row.payload,
      created_at: row.createdAt.toISOString(),
    })),
    page,
    page_size: pageSize,
    total,
    has_more: page * pageSize < total,
  };
}

export interface ReplayRequest {
  workspaceId: string;
  /** The replay's own x-request-id: its learning signal, and feedback on it, use this one. */
  requestId: string;
  queryId: string;
  /** As for a search: only the console's playground (a dashboard session) gets `_explain`. */
  session: boolean;
}

/**
 * POST /v1/search/replay: the saved payload through the search service again, so it is metered,
 * ranked and recorded (a learning signal under the replay's request id) like any search. It is
 * not saved to the history a second time. Another workspace's query id is not found.
 */
export async function replaySearch(
  deps: SearchDeps,
  request: ReplayRequest,
): Promise<ReplaySearchResponse> {
  // The writer: a replay right after its search must find the history that search just saved.
  const saved = await savedSearchById(deps.writer, request.workspaceId, request.queryId);
  if (!saved) throw new ServiceError('NOT_FOUND', `No saved search ${request.queryId}`);
  // The payload was valid when it was saved; a contract that has since narrowed may refuse it.
  const parsed = SearchPayload.safeParse(saved.payload);
  if (!parsed.success) {
    throw new ServiceError(
      'CONFLICT',
      `Saved search ${request.queryId} is no longer a valid search payload`,
    );
  }
  const payload = parsed.data;
  const outcome = await searchMemories(deps, {
    workspaceId: request.workspaceId,
    requestId: request.requestId,
    route: 'search',
    payload,
    explain: payload.explain === true && request.session,
  });
  const { results, page, page_size, total, has_more } = outcome;
  return { query_id: saved.id, results, page, page_size, total, has_more };
}

/**
 * POST /v1/context/feedback: a feedback row on a context response, named by the context call's
 * x-request-id (404 when this workspace made no such call). A `rating` is also applied as
 * POST /v1/feedback applies it (rank-weighted, a later rating replaces an earlier one), in the
 * same transaction as the row. The memory ids must be memories of this workspace; with the
 * comment they are kept on the row for review and do not change ranking.
 */
export async function sendContextFeedback(
  db: Database,
  workspaceId: string,
  payload: ContextFeedbackPayload,
  events: EventOutbox,
  pendingSignals?: BackgroundTasks,
): Promise<ContextFeedbackResponse> {
  // Learning signals are written in the background: a call's record must be there first.
  await pendingSignals?.drain();
  const helpful = [...new Set(payload.helpful_memory_ids ?? [])];
  const unhelpful = [...new Set(payload.unhelpful_memory_ids ?? [])];
  return db.transaction(async (tx) => {
    const named = [...helpful, ...unhelpful];
    const found = new Set((await memoryHeads(tx, workspaceId, named)).map((head) => head.id));
    const missing = named.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new ServiceError('NOT_FOUND', `Memory ${missing.join(', ')} not found`);
    }
    let applied = 0;
    const rating: FeedbackValue | null = payload.rating ?? null;
    const judged = { helpful_memory_ids: helpful, unhelpful_memory_ids: unhelpful };
    if (rating !== null) {
      const vote = { feedback: rating, request_id: payload.request_id };
      applied = (await applyFeedbackIn(tx, workspaceId, vote, 'context', judged)).applied;
    } else {
      const signal = await latestSignalForRequest(tx, workspaceId, payload.request_id);
      if (!signal || signal.route !== 'context') {
        throw new ServiceError(
          'NOT_FOUND',
          `No context call with request id ${payload.request_id}`,
        );
      }
      // No vote to carry the event: the judgement of the memories is the change.
      await events.emit(tx, [
        {
          kind: 'feedback',
          workspaceId,
          memoryId: null,
          rule: 'context',
          details: { request_id: payload.request_id, feedback: null, memory_ids: [], ...judged },
        },
      ]);
    }
    const row = await insertContextFeedback(tx, {
      workspaceId,
      requestId: payload.request_id,
      rating,
      helpfulMemoryIds: helpful,
      unhelpfulMemoryIds: unhelpful,
      comment: payload.comment ?? null,
    });
    return {
      feedback_id: row.id,
      request_id: row.requestId,
      rating,
      applied,
      helpful_memory_ids: row.helpfulMemoryIds,
      unhelpful_memory_ids: row.unhelpfulMemoryIds,
      comment: row.comment,
      created_at: row.createdAt.toISOString(),
    };
  });
}

/**
 * The AI cost of a replay, estimated before the saved query is read (the cost limits run ahead
 * of the handler): that of the longest query a search takes, so a replay never costs more than
 * its estimate.
 */
export function estimateReplayCost(prices: AiPrices): number {
  return estimateQueryCost('x'.repeat(LIMITS.query.max), prices);
}

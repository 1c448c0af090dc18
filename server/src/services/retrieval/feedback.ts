import type { FeedbackPayload, FeedbackResponse } from '@mnemo/contract';
import type { Database } from '../../db/client.js';
import type { DomainEvent } from '../../db/queries/events.js';
import type { Queryable } from '../../db/queries/statement.js';
import {
  adjustFeedbackScore,
  latestSignalForRequest,
  setSignalFeedback,
} from '../../db/queries/signals.js';
import { ServiceError } from '../../errors.js';
import type { BackgroundTasks } from '../background.js';

/** A memory's feedback score stays within ±this many full votes. */
export const FEEDBACK_LIMIT = 3;

const direction = (feedback: string | null): number =>
  feedback === 'positive' ? 1 : feedback === 'negative' ? -1 : 0;

/**
 * POST /v1/feedback: applies the vote to the memories the request returned, weighted by their
 * rank (1, 1/2, 1/3, ...: the top result earned most of the credit or blame). Voting again on the
 * same request replaces the earlier vote instead of adding to it.
 */
export async function applyFeedback(
  db: Database,
  workspaceId: string,
  payload: FeedbackPayload,
  /** Learning signals are written in the background: wait for pending ones first, so a vote
   * sent right after its search finds the search's record. */
  pendingSignals?: BackgroundTasks,
): Promise<FeedbackResponse> {
  await pendingSignals?.drain();
  return db.transaction((tx) => applyFeedbackIn(tx, workspaceId, payload));
}

/**
 * The vote of {@link applyFeedback} inside the caller's transaction (POST /v1/context/feedback
 * stores its row in the same one), with its one `feedback` event (`details` adds to the event's).
 * `route` narrows which calls the request id may name.
 */
export async function applyFeedbackIn(
  tx: Queryable,
  workspaceId: string,
  payload: FeedbackPayload,
  route?: 'search' | 'context',
  details: Record<string, unknown> = {},
): Promise<FeedbackResponse> {
  const signal = await latestSignalForRequest(tx, workspaceId, payload.request_id);
  if (!signal || (route !== undefined && signal.route !== route)) {
    const call = route === undefined ? 'search or context' : route;
    throw new ServiceError('NOT_FOUND', `No ${call} call with request id ${payload.request_id}`);
  }
  const change = direction(payload.feedback) - direction(signal.feedback);
  const moved: string[] = [];
  let applied = 0;
  for (const result of signal.results) {
    if (change !== 0) {
      const exists = await adjustFeedbackScore(
        tx,
        workspaceId,
        result.memoryId,
        change / result.rank,
        FEEDBACK_LIMIT,
      );
      if (exists) {
        applied += 1;
        moved.push(result.memoryId);
      }
    } else {
      applied += 1;
    }
  }
  const event: DomainEvent = {
    kind: 'feedback',
    workspaceId,
    memoryId: null,
    rule: signal.route === 'context' ? 'context' : 'search',
    details: {
      request_id: payload.request_id,
      feedback: payload.feedback,
      memory_ids: moved,
      ...details,
    },
  };
  await setSignalFeedback(tx, signal.id, payload.feedback, [event]);
  return { request_id: payload.request_id, feedback: payload.feedback, applied };
}

import type { FeedbackPayload, FeedbackResponse } from '@mnemo/contract';
import type { Database } from '../../db/client.js';
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
  return db.transaction(async (tx) => {
    const signal = await latestSignalForRequest(tx, workspaceId, payload.request_id);
    if (!signal) {
      throw new ServiceError(
        'NOT_FOUND',
        `No search or context call with request id ${payload.request_id}`,
      );
    }
    const change = direction(payload.feedback) - direction(signal.feedback);
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
        if (exists) applied += 1;
      } else {
        applied += 1;
      }
    }
    await setSignalFeedback(tx, signal.id, payload.feedback);
    return { request_id: payload.request_id, feedback: payload.feedback, applied };
  });
}

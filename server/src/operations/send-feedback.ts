import { contract, type FeedbackPayload, type FeedbackResponse } from '@mnemo/contract';
import { applyFeedback } from '../services/retrieval/feedback.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** POST /v1/feedback and the send_feedback tool. */
export const sendFeedback = defineOperation<
  FeedbackPayload,
  FeedbackResponse,
  Pick<OperationContext, 'writer' | 'background'>
>('sendFeedback', contract.search.sendFeedback, async (ctx, { caller, input }) => ({
  output: await applyFeedback(ctx.writer, caller.workspaceId, input, ctx.background),
}));

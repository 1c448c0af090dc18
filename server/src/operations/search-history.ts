import {
  contract,
  type ContextFeedbackPayload,
  type ContextFeedbackResponse,
  type SearchHistoryQuery,
  type SearchHistoryResponse,
} from '@mnemo/contract';
import {
  listSearchHistory,
  sendContextFeedback as feedback,
} from '../services/retrieval/history.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** GET /v1/search/history */
export const getSearchHistory = defineOperation<
  SearchHistoryQuery,
  SearchHistoryResponse,
  Pick<OperationContext, 'writer' | 'background'>
>('getSearchHistory', contract.history.getSearchHistory, async (ctx, { caller, input }) => {
  // Searches save their history in the background: one just answered is listed too. Read from
  // the primary, where that history was just written.
  await ctx.background.drain();
  return { output: await listSearchHistory(ctx.writer, caller.workspaceId, input) };
});

/** POST /v1/context/feedback */
export const sendContextFeedback = defineOperation<
  ContextFeedbackPayload,
  ContextFeedbackResponse,
  Pick<OperationContext, 'writer' | 'background' | 'events'>
>('sendContextFeedback', contract.history.sendContextFeedback, async (ctx, { caller, input }) => ({
  output: await feedback(ctx.writer, caller.workspaceId, input, ctx.events, ctx.background),
}));

import { contract, type ReplaySearchPayload, type ReplaySearchResponse } from '@mnemo/contract';
import { replaySearch as replay } from '../services/retrieval/history.js';
import { searchPorts, type SearchContext } from './context.js';
import { defineOperation } from './operation.js';

/** POST /v1/search/replay: a saved search run again, metered like a search. */
export const replaySearch = defineOperation<
  ReplaySearchPayload,
  ReplaySearchResponse,
  SearchContext
>('replaySearch', contract.history.replaySearch, async (ctx, { caller, input }) => {
  // Searches save their history in the background: one just answered can be replayed.
  await ctx.background.drain();
  return {
    output: await replay(searchPorts(ctx), {
      workspaceId: caller.workspaceId,
      requestId: caller.requestId,
      queryId: input.query_id,
      session: caller.via === 'session',
    }),
  };
});

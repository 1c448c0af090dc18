import { contract, type SearchPayload } from '@mnemo/contract';
import { searchMemories as runSearch, type SearchOutcome } from '../services/retrieval/search.js';
import { searchPorts, type SearchContext } from './context.js';
import { defineOperation } from './operation.js';

export type SearchPage = Pick<
  SearchOutcome,
  'results' | 'page' | 'page_size' | 'total' | 'has_more'
>;

/** POST /v1/search and the search_memories tool. */
export const searchMemories = defineOperation<SearchPayload, SearchPage, SearchContext>(
  'searchMemories',
  contract.search.searchMemories,
  async (ctx, { caller, input }) => {
    const { results, page, page_size, total, has_more } = await runSearch(searchPorts(ctx), {
      workspaceId: caller.workspaceId,
      requestId: caller.requestId,
      route: 'search',
      payload: input,
      saveHistory: caller.saveHistory,
      // Only the console's playground (a dashboard session) is given the explanation.
      explain: input.explain === true && caller.via === 'session',
    });
    return { output: { results, page, page_size, total, has_more } };
  },
);

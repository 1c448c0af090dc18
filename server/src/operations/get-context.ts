import { contract, type ContextResponse, type ContextPayload } from '@mnemo/contract';
import { buildContext } from '../services/retrieval/context.js';
import { searchPorts, type SearchContext } from './context.js';
import { defineOperation } from './operation.js';

/** POST /v1/context and the get_context tool. */
export const getContext = defineOperation<ContextPayload, ContextResponse, SearchContext>(
  'getContext',
  contract.search.getContext,
  async (ctx, { caller, input }) => ({
    output: await buildContext(searchPorts(ctx), {
      workspaceId: caller.workspaceId,
      requestId: caller.requestId,
      route: 'context',
      payload: input,
    }),
  }),
);

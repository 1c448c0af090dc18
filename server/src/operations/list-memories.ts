import { contract, type ListMemoriesQuery, type ListMemoriesResponse } from '@mnemo/contract';
import { listMemories as list } from '../services/memories.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** GET /v1/memories and the list_memories tool (which never sets `all_owners`). */
export const listMemories = defineOperation<
  ListMemoriesQuery,
  ListMemoriesResponse,
  Pick<OperationContext, 'reader'>
>('listMemories', contract.memories.listMemories, async (ctx, { caller, input }) => ({
  output: await list(ctx.reader, caller.workspaceId, input),
}));

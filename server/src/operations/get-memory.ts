import { contract, type Memory } from '@mnemo/contract';
import { getMemory as get } from '../services/memories.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** GET /v1/memories/:id and the get_memory tool. */
export const getMemory = defineOperation<{ id: string }, Memory, Pick<OperationContext, 'reader'>>(
  'getMemory',
  contract.memories.getMemory,
  async (ctx, { caller, input }) => ({
    output: await get(ctx.reader, caller.workspaceId, input.id),
  }),
);

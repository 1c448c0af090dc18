import { contract, type DeleteMemoryResponse } from '@mnemo/contract';
import { deleteMemory as remove } from '../services/memories.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** DELETE /v1/memories/:id and the delete_memory tool. */
export const deleteMemory = defineOperation<
  { id: string },
  DeleteMemoryResponse,
  Pick<OperationContext, 'writer'>
>('deleteMemory', contract.memories.deleteMemory, async (ctx, { caller, input }) => ({
  output: await remove(ctx.writer, caller.workspaceId, input.id),
}));

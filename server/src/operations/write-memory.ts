import { contract, type MemoryInsertPayload, type MemoryInsertResponse } from '@mnemo/contract';
import { writeMemory as runWrite } from '../services/memory-write/index.js';
import { writePorts, type WriteContext } from './context.js';
import { defineOperation } from './operation.js';

/** POST /v1/memories and the add_memory tool. */
export const writeMemory = defineOperation<MemoryInsertPayload, MemoryInsertResponse, WriteContext>(
  'writeMemory',
  contract.memories.createMemory,
  async (ctx, { caller, input, audit }) => {
    const result = await runWrite(writePorts(ctx), {
      workspaceId: caller.workspaceId,
      payload: input,
      piiScan: caller.piiScan,
      audit,
    });
    return { output: result.response, audited: result.audited };
  },
);

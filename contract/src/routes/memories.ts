import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  DeleteMemoryResponse,
  ListMemoriesQuery,
  ListMemoriesResponse,
  Memory,
  MemoryIdParams,
  MemoryInsertPayload,
  MemoryInsertResponse,
} from '../schemas/memories.js';
import { ErrorEnvelope } from '../schemas/common.js';
import { MEMORY_WRITE, TENANT, type RouteMetadata } from './auth.js';

const c = initContract();

/** `1` asks for heuristic email and phone hints in `safety.pii_hints`. */
export const PII_SCAN_HEADER = 'x-safety-pii-scan';

export const CreateMemoryHeaders = z.object({
  [PII_SCAN_HEADER]: z.string().optional(),
});

export const memoriesContract = c.router(
  {
    createMemory: {
      method: 'POST',
      path: '/memories',
      headers: CreateMemoryHeaders,
      body: MemoryInsertPayload,
      // 402 TRIAL_EXPIRED: no plan in force (a metered route). 409 CONFLICT: the idempotency_key
      // was used before with another payload.
      responses: { 200: MemoryInsertResponse, 402: ErrorEnvelope, 409: ErrorEnvelope },
      metadata: {
        ...TENANT,
        internalSubrequest: true,
        cost: 'write',
        ...MEMORY_WRITE,
        mcpTool: 'add_memory',
      } satisfies RouteMetadata,
      summary: 'Store a memory for an owner',
    },
    listMemories: {
      method: 'GET',
      path: '/memories',
      query: ListMemoriesQuery,
      responses: { 200: ListMemoriesResponse },
      metadata: { ...TENANT, mcpTool: 'list_memories' } satisfies RouteMetadata,
      summary: 'List memories, newest first',
    },
    getMemory: {
      method: 'GET',
      path: '/memories/:id',
      pathParams: MemoryIdParams,
      responses: { 200: Memory },
      metadata: { ...TENANT, mcpTool: 'get_memory' } satisfies RouteMetadata,
      summary: 'Read one memory',
    },
    deleteMemory: {
      method: 'DELETE',
      path: '/memories/:id',
      pathParams: MemoryIdParams,
      body: c.noBody(),
      responses: { 200: DeleteMemoryResponse },
      metadata: {
        ...TENANT,
        events: ['memory.deleted'],
        mcpTool: 'delete_memory',
      } satisfies RouteMetadata,
      summary: 'Delete a memory with its chunks and links',
    },
  },
  { pathPrefix: '/v1' },
);

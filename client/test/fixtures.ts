import type { Memory } from '@mnemo/contract';

export const BASE_URL = 'http://mnemo.test';

export const health = {
  status: 'ok',
  version: '1.0.0',
  embedding_model: 'local/hash-256',
} as const;

export function memory(overrides: Partial<Memory> = {}): Memory {
  return {
    id: '0b9f4a52-8a0e-4c55-9a8e-2f1c3b7d6e01',
    text: 'Prefers window seats on long flights',
    owner_id: 'u_42',
    owner_type: 'user',
    scope: null,
    namespace: null,
    containerTag: null,
    metadata: {},
    memory_type: 'preference',
    importance: 1,
    chunk_profile: 'balanced',
    lifecycle_state: 'active',
    confidence: 0.9,
    volatility: 0.1,
    expires_at: null,
    effective_at: null,
    parent_memory_id: null,
    replaced_by_memory_id: null,
    pinned: false,
    source_weight: 1,
    priority_score: 0.55,
    claims: [],
    lifecycle_events: [],
    chunks: 1,
    created_at: '2026-01-31T09:00:00.000Z',
    updated_at: '2026-01-31T09:00:00.000Z',
    ...overrides,
  };
}

export function envelope(
  code: string,
  message: string,
  requestId = 'req_123',
  details?: Record<string, string[]>,
) {
  return { error: { code, message, ...(details ? { details } : {}) }, request_id: requestId };
}

/** One JSON-RPC message as the MCP client posts it. */
export interface RpcMessage {
  jsonrpc: '2.0';
  id?: number | string;
  method: string;
  params?: Record<string, unknown> & { name?: string; arguments?: Record<string, unknown> };
}

export const searchResponse = {
  results: [
    {
      chunk_id: 'c1',
      memory_id: '0b9f4a52-8a0e-4c55-9a8e-2f1c3b7d6e01',
      chunk_index: 0,
      text: 'Prefers window seats on long flights',
      score: 0.91,
    },
  ],
  page: 1,
  page_size: 10,
  total: 1,
  has_more: false,
};

export const contextResponse = {
  context_text: '[1] Prefers window seats on long flights',
  citations: [
    { i: 1, chunk_id: 'c1', memory_id: '0b9f4a52-8a0e-4c55-9a8e-2f1c3b7d6e01', chunk_index: 0 },
  ],
  page: 1,
  page_size: 10,
  total: 1,
  has_more: false,
};

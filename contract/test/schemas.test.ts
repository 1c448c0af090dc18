import { describe, expect, it } from 'vitest';
import {
  ERROR_STATUS,
  ErrorEnvelope,
  ListMemoriesQuery,
  MemoryInsertPayload,
  MemoryInsertResponse,
  SearchPayload,
  SearchResponse,
  ContextResponse,
  contract,
  listRoutes,
} from '../src/index.js';

const fieldErrors = (result: {
  success: boolean;
  error?: { issues: Array<{ path: (string | number)[] }> };
}) => (result.success ? [] : (result.error?.issues.map((issue) => issue.path.join('.')) ?? []));

describe('memory insert payload', () => {
  it('accepts the minimal and the full payload', () => {
    expect(MemoryInsertPayload.safeParse({ text: 'hi' }).success).toBe(true);
    const full = {
      text: 'I moved to Berlin',
      userId: 'u1',
      user_id: 'u1',
      owner_id: 'u1',
      entity_id: 'u1',
      owner_type: 'user',
      entity_type: 'user',
      scope: 's',
      namespace: 'n',
      containerTag: 'c',
      metadata: { a: 'x', b: 1, c: true, d: null },
      memory_type: 'fact',
      importance: 100,
      chunk_profile: 'document',
      extract: false,
      effective_at: '2026-01-31T09:00:00Z',
      replaces_memory_id: '0b0a3d8e-97a4-4d3f-9a51-0c6fb4cde111',
      idempotency_key: '12345678',
    };
    expect(MemoryInsertPayload.parse(full)).toEqual(full);
  });

  it.each([
    [{ text: '' }, 'text'],
    [{ text: 'x'.repeat(50_001) }, 'text'],
    [{ text: 'x', importance: 0.001 }, 'importance'],
    [{ text: 'x', importance: 100.5 }, 'importance'],
    [{ text: 'x', idempotency_key: 'short' }, 'idempotency_key'],
    [{ text: 'x', idempotency_key: 'k'.repeat(129) }, 'idempotency_key'],
    [{ text: 'x', memory_type: 'opinion' }, 'memory_type'],
    [{ text: 'x', owner_type: 'agent' }, 'owner_type'],
    [{ text: 'x', chunk_profile: 'tiny' }, 'chunk_profile'],
    [{ text: 'x', metadata: { nested: { a: 1 } } }, 'metadata.nested'],
    [{ text: 'x', replaces_memory_id: 'nope' }, 'replaces_memory_id'],
    [{ text: 'x', user_id: '' }, 'user_id'],
    [{ text: 'x', effective_at: 'yesterday' }, 'effective_at'],
  ])('refuses %j at %s', (payload, field) => {
    expect(fieldErrors(MemoryInsertPayload.safeParse(payload))).toContain(field);
  });

  it('refuses owner aliases that disagree and names them', () => {
    const result = MemoryInsertPayload.safeParse({
      text: 'x',
      userId: 'a',
      entity_id: 'b',
      owner_type: 'user',
      entity_type: 'team',
    });
    expect(fieldErrors(result).sort()).toEqual(['entity_id', 'entity_type']);
  });

  it('insert response requires memory_id, stored and extraction', () => {
    expect(MemoryInsertResponse.safeParse({ memory_id: 'm', stored: true }).success).toBe(false);
    expect(
      MemoryInsertResponse.safeParse({
        memory_id: 'm',
        stored: true,
        extraction: { status: 'skipped', reason: 'user_disabled' },
      }).success,
    ).toBe(true);
  });
});

describe('search payload', () => {
  it.each([
    [{ query: '' }, 'query'],
    [{ query: 'x'.repeat(2001) }, 'query'],
    [{ query: 'q', top_k: 0 }, 'top_k'],
    [{ query: 'q', top_k: 21 }, 'top_k'],
    [{ query: 'q', page: 0 }, 'page'],
    [{ query: 'q', page_size: 51 }, 'page_size'],
    [{ query: 'q', min_score: 1.1 }, 'min_score'],
    [{ query: 'q', search_mode: 'semantic' }, 'search_mode'],
    [{ query: 'q', retrieval_profile: 'fast' }, 'retrieval_profile'],
    [{ query: 'q', filters: { memory_type: [] } }, 'filters.memory_type'],
    [{ query: 'q', filters: { filter_mode: 'xor' } }, 'filters.filter_mode'],
    [{ query: 'q', filters: { start_time: 'soon' } }, 'filters.start_time'],
    [
      { query: 'q', filters: { start_time: '2026-02-01', end_time: '2026-01-01' } },
      'filters.end_time',
    ],
    [{ query: 'q', filters: { memory_typo: 'fact' } }, 'filters'],
  ])('refuses %j at %s', (payload, field) => {
    expect(fieldErrors(SearchPayload.safeParse(payload))).toContain(field);
  });

  it('accepts one memory type or an array of them, and metadata filters', () => {
    expect(SearchPayload.safeParse({ query: 'q', filters: { memory_type: 'fact' } }).success).toBe(
      true,
    );
    expect(
      SearchPayload.safeParse({
        query: 'q',
        top_k: 20,
        page_size: 50,
        min_score: 0,
        explain: true,
        filters: {
          memory_type: ['fact', 'pin'],
          metadata: { k: null },
          filter_mode: 'or',
          start_time: '2026-01-01T00:00:00+05:30',
        },
      }).success,
    ).toBe(true);
  });

  it('search and context responses carry the paging fields', () => {
    const page = { page: 1, total: 0, has_more: false };
    expect(SearchResponse.safeParse({ results: [], ...page }).success).toBe(true);
    expect(SearchResponse.safeParse({ results: [] }).success).toBe(false);
    expect(
      ContextResponse.safeParse({
        context_text: '',
        citations: [{ i: 1, chunk_id: 'c', memory_id: 'm' }],
        ...page,
      }).success,
    ).toBe(false);
  });
});

describe('list memories query', () => {
  it('coerces query strings and decodes the metadata filter', () => {
    expect(ListMemoriesQuery.parse({ page: '2', page_size: '100', metadata: '{"a":1}' })).toEqual({
      page: 2,
      page_size: 100,
      metadata: { a: 1 },
    });
    expect(fieldErrors(ListMemoriesQuery.safeParse({ page_size: '101' }))).toContain('page_size');
    expect(fieldErrors(ListMemoriesQuery.safeParse({ metadata: '{"a":{"b":1}}' }))).toContain(
      'metadata',
    );
  });
});

describe('errors and routes', () => {
  it('the envelope requires error and request_id', () => {
    expect(ErrorEnvelope.safeParse({ error: { code: 'NOT_FOUND', message: 'x' } }).success).toBe(
      false,
    );
    expect(
      ErrorEnvelope.safeParse({ error: { code: 'NOPE', message: 'x' }, request_id: 'r' }).success,
    ).toBe(false);
    expect(ERROR_STATUS.PAYLOAD_TOO_LARGE).toBe(413);
    expect(ERROR_STATUS.ENTITLEMENT_DEGRADED).toBe(503);
  });

  it('lists every route under its spec path', () => {
    const routes = listRoutes(contract).map((route) => `${route.method} ${route.path}`);
    expect(routes.sort()).toEqual(
      [
        'GET /healthz',
        'GET /v1/health',
        'GET /ready',
        'POST /v1/memories',
        'GET /v1/memories',
        'GET /v1/memories/:id',
        'DELETE /v1/memories/:id',
        'POST /v1/search',
        'POST /v1/context',
        'POST /v1/feedback',
        'GET /v1/usage/today',
        'GET /v1/billing/status',
        'POST /v1/billing/checkout',
        'POST /v1/billing/webhook',
        'POST /v1/billing/portal',
        'POST /v1/dashboard/bootstrap',
        'POST /v1/dashboard/session',
        'POST /v1/dashboard/logout',
        'GET /v1/dashboard/overview-stats',
        'GET /v1/dashboard/workspaces',
        'POST /v1/dashboard/workspaces',
        'GET /v1/dashboard/api-keys',
        'POST /v1/dashboard/api-keys',
        'POST /v1/dashboard/api-keys/revoke',
        'POST /admin/memory-hygiene',
        'POST /admin/memory-retention',
        'POST /admin/usage/reconcile',
        'POST /admin/webhooks/reprocess',
        'GET /v1/admin/billing/health',
        'POST /admin/billing/cancel-at-period-end',
        'GET /v1/admin/jobs',
        'POST /admin/sessions/cleanup',
        // Operator routes of the spec's Endpoints (shapes designed here: docs/ingest.md,
        // docs/links-history-pins.md, docs/operator.md).
        'POST /v1/memories/conversation',
        'POST /v1/ingest',
        'POST /v1/memories/:id/links',
        'GET /v1/memories/:id/links',
        'DELETE /v1/memories/:id/links',
        'GET /v1/search/history',
        'POST /v1/search/replay',
        'POST /v1/context/feedback',
        'PATCH /v1/profile/pins',
        'GET /v1/profile/pins',
        'GET /v1/audit/log',
        'GET /v1/pruning/metrics',
        'GET /v1/connectors/settings',
        'PATCH /v1/connectors/settings',
        'POST /v1/workspaces',
        'POST /v1/api-keys',
        'GET /v1/api-keys',
        'POST /v1/api-keys/:id/revoke',
        // Extensions beyond the spec, each documented in its docs/ page.
        'GET /v1/usage/history', // docs/console.md: the console's charts
        'GET /v1/usage/memories',
        'GET /v1/export', // docs/export.md
        'POST /v1/import',
        'POST /v1/erase',
        // Signed lifecycle webhooks (docs/webhooks.md).
        'POST /v1/webhooks/endpoints',
        'GET /v1/webhooks/endpoints',
        'GET /v1/webhooks/endpoints/:id',
        'PATCH /v1/webhooks/endpoints/:id',
        'DELETE /v1/webhooks/endpoints/:id',
        'POST /v1/webhooks/endpoints/:id/rotate-secret',
        'GET /v1/webhooks/endpoints/:id/deliveries',
        'POST /v1/webhooks/endpoints/:id/deliveries/:delivery_id/replay',
      ].sort(),
    );
  });
});

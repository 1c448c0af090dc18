import { describe, expect, it } from 'vitest';
import {
  ADMIN,
  CHUNK_PROFILES,
  CLIENT_OWNER_ID_ALIASES,
  CLIENT_OWNER_TYPE_ALIASES,
  CLIENT_OWNER_TYPES,
  FEEDBACK_VALUES,
  HYGIENE_LIMIT,
  LEGACY_OWNER_TYPES,
  LIMITS,
  MemoryHygieneQuery,
  MemoryHygieneReport,
  OPERATOR_TAG,
  OWNER_ID_ALIASES,
  OWNER_TYPE_ALIASES,
  OWNER_TYPES,
  OwnerFields,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
  buildOpenApiDocument,
  contract,
  isOperatorRoute,
  listRoutes,
  routeAuth,
} from '../src/index.js';

describe('canonical constants', () => {
  it('pin the spec values', () => {
    expect(LIMITS).toEqual({
      memoryText: { min: 1, max: 50_000 },
      importance: { min: 0.01, max: 100 },
      idempotencyKey: { min: 8, max: 128 },
      query: { min: 1, max: 2000 },
      topK: { min: 1, max: 20 },
      searchPageSize: { min: 1, max: 50 },
      listPageSize: { min: 1, max: 100 },
      minScore: { min: 0, max: 1 },
      feedbackRequestId: { min: 1, max: 128 },
      contextTokens: { min: 50, max: 16_000 },
    });
    expect(SEARCH_MODES).toEqual(['hybrid', 'vector', 'keyword']);
    expect(RETRIEVAL_PROFILES).toEqual(['balanced', 'recall', 'precision']);
    expect(CHUNK_PROFILES).toEqual(['balanced', 'dense', 'document']);
    expect(FEEDBACK_VALUES).toEqual(['positive', 'negative']);
    expect(HYGIENE_LIMIT).toEqual({ min: 1, max: 10_000, default: 1000 });
  });

  it('owner aliases: the body fields are the alias lists, and the client accepts every one', () => {
    expect(Object.keys(OwnerFields.shape).sort()).toEqual(
      [...OWNER_ID_ALIASES, ...OWNER_TYPE_ALIASES].sort(),
    );
    expect(CLIENT_OWNER_ID_ALIASES).toEqual(expect.arrayContaining([...OWNER_ID_ALIASES]));
    expect(CLIENT_OWNER_TYPE_ALIASES).toEqual(expect.arrayContaining([...OWNER_TYPE_ALIASES]));
    expect(CLIENT_OWNER_ID_ALIASES[0]).toBe('ownerId');
    expect(CLIENT_OWNER_TYPE_ALIASES[0]).toBe('ownerType');
    expect(CLIENT_OWNER_TYPES).toEqual([...OWNER_TYPES, ...Object.keys(LEGACY_OWNER_TYPES)]);
    expect(LEGACY_OWNER_TYPES).toEqual({ agent: 'app' });
  });
});

describe('admin area', () => {
  const route = contract.admin.runMemoryHygiene;

  it('is an operator route behind the admin token', () => {
    expect(`${route.method} ${route.path}`).toBe('POST /admin/memory-hygiene');
    expect(route.metadata).toEqual(ADMIN);
    expect(routeAuth(route)).toBe('admin_token');
    expect(isOperatorRoute(route)).toBe(true);
    // Every admin-token route is an operator route (outside the published contract); so are the
    // operator routes the spec lists under tenant auth, and POST /v1/workspaces.
    const all = listRoutes(contract);
    const operators = all.filter(isOperatorRoute);
    expect(operators).toContain(route);
    expect(all.filter((r) => routeAuth(r) === 'admin_token').every(isOperatorRoute)).toBe(true);
    const others = operators.filter((r) => routeAuth(r) !== 'admin_token');
    // (schemas.test.ts lists every route by path.)
    expect(others.length).toBeGreaterThan(0);
    expect(
      others.every((r) => ['api_key_or_session', 'admin_api_key'].includes(routeAuth(r))),
    ).toBe(true);
    // Every /admin/ path is an operator route.
    expect(all.filter((r) => r.path.startsWith('/admin/')).every(isOperatorRoute)).toBe(true);
  });

  it('parses the query as the server always has', () => {
    expect(MemoryHygieneQuery.parse({})).toEqual({ dry_run: false, limit: 1000 });
    expect(MemoryHygieneQuery.parse({ dry_run: '1', limit: '5' })).toEqual({
      dry_run: true,
      limit: 5,
    });
    expect(MemoryHygieneQuery.parse({ dry_run: 'true' }).dry_run).toBe(true);
    expect(MemoryHygieneQuery.parse({ dry_run: '0' }).dry_run).toBe(false);
    const bad = MemoryHygieneQuery.safeParse({
      dry_run: 'maybe',
      limit: '10001',
      workspace_id: 'nope',
      workspace: 'typo',
    });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((issue) => issue.path.join('.') || issue.code).sort()).toEqual([
      'dry_run',
      'limit',
      'unrecognized_keys',
      'workspace_id',
    ]);
  });

  it('the report carries what a run found', () => {
    const report = {
      dry_run: true,
      expired: { count: 1, memory_ids: ['0b0a3d8e-97a4-4d3f-9a51-0c6fb4cde111'] },
      duplicates: {
        count: 1,
        superseded: [{ memory_id: 'b', kept_memory_id: 'a', similarity: 1 }],
      },
      scanned: 3,
      budget_exhausted: false,
    };
    expect(MemoryHygieneReport.parse(report)).toEqual(report);
    expect(MemoryHygieneReport.safeParse({ ...report, scanned: undefined }).success).toBe(false);
  });

  it('is tagged operator in the OpenAPI document, with the admin token as its security', () => {
    const document = buildOpenApiDocument();
    const operation = document.paths['/admin/memory-hygiene']?.post as Record<string, unknown>;
    expect(operation.tags).toContain(OPERATOR_TAG);
    expect(operation['x-operator']).toBe(true);
    expect(operation.security).toEqual([{ adminToken: [] }]);
    expect(document.tags).toEqual([expect.objectContaining({ name: OPERATOR_TAG })]);
    const memories = document.paths['/v1/memories']?.post as Record<string, unknown>;
    expect(memories.tags).not.toContain(OPERATOR_TAG);
    expect(memories['x-operator']).toBeUndefined();
  });
});

import type { MemoryInsertPayload, MemoryInsertResponse } from '@mnemo/contract';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { DEDUPE_CANDIDATES } from '../../src/services/memory-write/dedupe.js';
import { requestHash } from '../../src/services/memory-write/idempotency.js';
import type { WriteRequest } from '../../src/services/memory-write/types.js';
import {
  checkLookups,
  lookupKeys,
  memorySpace,
  prepareWrite,
} from '../../src/services/memory-write/validate.js';
import { canonicalHash } from '../../src/text/canonical.js';

const WORKSPACE = '00000000-0000-4000-8000-000000000001';
const REPLACED = '00000000-0000-4000-8000-0000000000aa';

function writeRequest(payload: MemoryInsertPayload, piiScan = false): WriteRequest {
  return {
    workspaceId: WORKSPACE,
    payload,
    piiScan,
    audit: {
      requestId: 'req-1',
      workspaceId: WORKSPACE,
      method: 'POST',
      path: '/v1/memories',
      startedAt: process.hrtime.bigint(),
    },
  };
}

const noLookups = { idempotency: undefined, replacementFound: false };

describe('memorySpace: the owner a write lands in', () => {
  it('gives a write without an owner id to the default owner, under the type it names', () => {
    expect(memorySpace(WORKSPACE, { text: 'x' })).toEqual({
      workspaceId: WORKSPACE,
      ownerId: 'default',
      ownerType: 'app',
      scope: null,
      namespace: null,
      containerTag: null,
    });
    expect(memorySpace(WORKSPACE, { text: 'x', owner_type: 'team' })).toMatchObject({
      ownerId: 'default',
      ownerType: 'team',
    });
  });

  it('reads the owner from any alias, a user unless a type is given, and keeps the labels', () => {
    expect(memorySpace(WORKSPACE, { text: 'x', user_id: 'alice' })).toMatchObject({
      ownerId: 'alice',
      ownerType: 'user',
    });
    expect(
      memorySpace(WORKSPACE, {
        text: 'x',
        entity_id: 'sales',
        entity_type: 'team',
        scope: 'work',
        namespace: 'crm',
        containerTag: 'q3',
      }),
    ).toEqual({
      workspaceId: WORKSPACE,
      ownerId: 'sales',
      ownerType: 'team',
      scope: 'work',
      namespace: 'crm',
      containerTag: 'q3',
    });
  });
});

describe('prepareWrite', () => {
  const now = new Date('2026-02-01T10:00:00Z');

  it('fills the defaults and derives hash, assessment and chunks from the text alone', () => {
    const write = prepareWrite(
      writeRequest({ text: 'Alice lives in Berlin', user_id: 'alice' }),
      now,
    );
    expect(write).toMatchObject({
      contentHash: canonicalHash('Alice lives in Berlin'),
      idempotencyKey: undefined,
      requestHash: '',
      replacesId: undefined,
      now,
      memoryType: 'note',
      importance: 1,
      metadata: {},
      effectiveAt: null,
      chunks: ['Alice lives in Berlin'],
    });
    expect(write.space.ownerId).toBe('alice');
    expect(write.assessment.claimKeys).toEqual(['alice|residence']);
  });

  it('hashes a keyed request the same whatever its key order, and apart from another payload', () => {
    const a = prepareWrite(
      writeRequest({ text: 'Tea', idempotency_key: 'key-0001', metadata: { a: 1, b: 2 } }),
    );
    const b = prepareWrite(
      writeRequest({ metadata: { b: 2, a: 1 }, idempotency_key: 'key-0001', text: 'Tea' }),
    );
    expect(a.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(b.requestHash).toBe(a.requestHash);
    expect(
      prepareWrite(writeRequest({ text: 'Tea', idempotency_key: 'key-0001' }, true)).requestHash,
    ).not.toBe(
      requestHash({ payload: { text: 'Tea', idempotency_key: 'key-0001' }, piiScan: false }),
    );
  });

  it('takes effective_at as the time the fact became true', () => {
    const write = prepareWrite(writeRequest({ text: 'x', effective_at: '2025-06-01' }), now);
    expect(write.effectiveAt).toEqual(new Date('2025-06-01'));
  });
});

describe('lookupKeys', () => {
  const vector = [0.6, 0.8];

  it('asks for duplicates, claim holders and, with vectors, the nearest memories', () => {
    const write = prepareWrite(
      writeRequest({ text: 'Alice lives in Berlin', idempotency_key: 'k-000001' }),
    );
    expect(lookupKeys(write, [vector])).toEqual({
      contentHash: write.contentHash,
      idempotencyKey: 'k-000001',
      replacesId: null,
      claimKeys: ['alice|residence'],
      nearest: { embedding: vector, limit: DEDUPE_CANDIDATES },
    });
    expect(lookupKeys(write, undefined).nearest).toBeUndefined();
  });

  it('never looks for what a deliberate rewrite duplicates or contradicts', () => {
    const write = prepareWrite(
      writeRequest({ text: 'Alice lives in Berlin', replaces_memory_id: REPLACED }),
    );
    expect(lookupKeys(write, [vector])).toEqual({
      contentHash: null,
      idempotencyKey: null,
      replacesId: REPLACED,
      claimKeys: [],
      nearest: undefined,
    });
  });
});

describe('checkLookups', () => {
  const keyed = prepareWrite(writeRequest({ text: 'Tea', idempotency_key: 'key-0001' }));
  const first: MemoryInsertResponse = {
    memory_id: 'first',
    stored: true,
    extraction: { status: 'run' },
  };

  it('replays the first response for a repeated key, unaudited', () => {
    const replay = checkLookups(keyed, {
      ...noLookups,
      idempotency: { requestHash: keyed.requestHash, response: first },
    });
    expect(replay).toEqual({ response: first, audited: false });
  });

  it('refuses a key reused with another payload', () => {
    const lookups = { ...noLookups, idempotency: { requestHash: 'other', response: first } };
    expect(() => checkLookups(keyed, lookups)).toThrow(ServiceError);
    expect(() => checkLookups(keyed, lookups)).toThrow(
      expect.objectContaining({
        code: 'CONFLICT',
        details: { idempotency_key: ['was already used with a different payload'] },
      }),
    );
  });

  it("refuses to replace a memory that is not this owner's", () => {
    const write = prepareWrite(writeRequest({ text: 'Tea', replaces_memory_id: REPLACED }));
    expect(() => checkLookups(write, noLookups)).toThrow(
      expect.objectContaining({
        code: 'BAD_REQUEST',
        details: { replaces_memory_id: ['is not a memory of this owner in this workspace'] },
      }),
    );
    expect(checkLookups(write, { ...noLookups, replacementFound: true })).toBeUndefined();
  });

  it('lets a write without a key or replacement go on', () => {
    const write = prepareWrite(writeRequest({ text: 'Tea' }));
    expect(checkLookups(write, noLookups)).toBeUndefined();
  });
});

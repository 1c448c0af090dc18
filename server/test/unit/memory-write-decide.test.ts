import type { MemoryInsertPayload } from '@mnemo/contract';
import { describe, expect, it } from 'vitest';
import type { ClaimHolder } from '../../src/db/queries/lifecycle.js';
import type { NearestMemory } from '../../src/db/queries/memory-writes.js';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { decideWrite, dedupedResponse } from '../../src/services/memory-write/dedupe.js';
import {
  mergedResponse,
  type InsertDecision,
  type MergeDecision,
} from '../../src/services/memory-write/evolve.js';
import { chunkChildren, type Extraction } from '../../src/services/memory-write/extract.js';
import { planInsert } from '../../src/services/memory-write/insert.js';
import type { WriteRequest } from '../../src/services/memory-write/types.js';
import { prepareWrite } from '../../src/services/memory-write/validate.js';

const WORKSPACE = '00000000-0000-4000-8000-000000000001';
const OLD = '00000000-0000-4000-8000-0000000000aa';
const NEWER = '00000000-0000-4000-8000-0000000000bb';
/** The write path's only setting planInsert reads: the episode window (turn context). */
const EPISODE_WINDOW = { episodeWindowSeconds: 1800 };
const THRESHOLDS = { nearThreshold: 0.9, semanticThreshold: 0.95 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function prepare(payload: MemoryInsertPayload, piiScan = false) {
  const request: WriteRequest = {
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
  return prepareWrite(request, new Date('2026-02-01T10:00:00Z'));
}

const near = (text: string, similarity: number, memoryId = OLD): NearestMemory => ({
  memoryId,
  text,
  similarity,
  chunkCount: 1,
});

const holder = (text: string, value: string, createdAt: Date): ClaimHolder => ({
  id: OLD,
  text,
  claims: [{ subject: 'alice', attribute: 'residence', value }],
  effectiveAt: null,
  createdAt,
  confidence: 0.8,
});

describe('decideWrite: is it stored already?', () => {
  it('takes a near-identical live memory for a near duplicate', () => {
    const write = prepare({ text: 'Alice prefers oat milk in her coffee!' });
    const decision = decideWrite(
      write,
      [near('alice prefers oat milk in her coffee', 0.5)],
      [],
      THRESHOLDS,
    );
    expect(decision).toMatchObject({ kind: 'dedupe', memoryId: OLD, dedupeKind: 'near' });
  });

  it('takes a one-chunk memory above the semantic threshold for a semantic duplicate', () => {
    const write = prepare({ text: 'Bob drives a blue car' });
    const decision = decideWrite(write, [near('Bob owns a navy automobile', 0.97)], [], THRESHOLDS);
    expect(decision).toMatchObject({ kind: 'dedupe', dedupeKind: 'semantic' });
    // Below the threshold the same memory is not one.
    expect(decideWrite(write, [near('Bob owns a navy automobile', 0.9)], [], THRESHOLDS)).toEqual({
      kind: 'insert',
      supersede: [],
    });
  });

  it('never takes a text that states another number or code for a semantic duplicate', () => {
    const write = prepare({ text: 'Carol code 5feceb66ffc86f38' });
    // However close the embeddings: the value is the fact.
    expect(decideWrite(write, [near('Carol code 6b86b273ff34fce1', 0.99)], [], THRESHOLDS)).toEqual(
      { kind: 'insert', supersede: [] },
    );
    expect(
      decideWrite(
        prepare({ text: 'The gate code is 4821' }),
        [near('The gate code is 9930', 0.99), near('Gate code: 4821', 0.96, NEWER)],
        [],
        THRESHOLDS,
      ),
    ).toMatchObject({ kind: 'dedupe', dedupeKind: 'semantic', memoryId: NEWER });
    // The same values in other words still are one.
    expect(
      decideWrite(
        prepare({ text: 'Carol, code 5feceb66ffc86f38' }),
        [near('code 5feceb66ffc86f38 (Carol)', 0.97)],
        [],
        THRESHOLDS,
      ),
    ).toMatchObject({ kind: 'dedupe', dedupeKind: 'semantic' });
  });

  it('never takes a deliberate rewrite for a duplicate of what it replaces', () => {
    const write = prepare({ text: 'Alice lives in Berlin', replaces_memory_id: OLD });
    expect(decideWrite(write, [near('Alice lives in Berlin', 1)], [], THRESHOLDS)).toEqual({
      kind: 'insert',
      supersede: [{ memoryId: OLD, rule: 'replaces_memory_id', details: {} }],
    });
  });

  it('supersedes a memory stating another value of the same fact, however alike', () => {
    const write = prepare({ text: 'Alice lives in Berlin' });
    const decision = decideWrite(
      write,
      [near('Alice lives in Rome', 0.99)],
      [holder('Alice lives in Rome', 'rome', new Date('2026-01-01'))],
      THRESHOLDS,
    );
    expect(decision).toEqual({
      kind: 'insert',
      supersede: [
        {
          memoryId: OLD,
          rule: 'conflict',
          details: {
            subject: 'alice',
            attribute: 'residence',
            old_value: 'rome',
            new_value: 'berlin',
          },
        },
      ],
    });
  });

  it('keeps an explicitly older value as history of the newer one', () => {
    const write = prepare({ text: 'Alice lives in Berlin', effective_at: '2020-01-01' });
    const decision = decideWrite(
      write,
      [],
      [holder('Alice lives in Rome', 'rome', new Date('2026-01-01'))],
      THRESHOLDS,
    );
    expect(decision).toMatchObject({ kind: 'insert', supersede: [], historyOf: { memoryId: OLD } });
  });
});

describe('decideWrite: evolve or supersede', () => {
  it('merges a refinement into the memory it says more about', () => {
    const write = prepare({ text: 'Alice likes green tea from Japan every morning' });
    expect(decideWrite(write, [near('Alice likes tea', 0.6)], [], THRESHOLDS)).toEqual({
      kind: 'merge',
      memoryId: OLD,
      previousText: 'Alice likes tea',
    });
  });

  it('takes a memory that says less than a live one for covered by it', () => {
    const write = prepare({ text: 'Alice likes tea' });
    expect(
      decideWrite(
        write,
        [near('Alice likes green tea from Japan every morning', 0.6)],
        [],
        THRESHOLDS,
      ),
    ).toMatchObject({ kind: 'dedupe', dedupeKind: 'near', rule: 'covered_by_existing' });
  });
});

describe('dedupedResponse', () => {
  it('answers with the stored memory, the kind of duplicate, no extraction and the PII hints', () => {
    expect(dedupedResponse(OLD, {})).toEqual({
      memory_id: OLD,
      stored: true,
      deduped: true,
      dedupe_kind: 'near',
      extraction: { status: 'skipped', reason: 'none' },
    });
    expect(dedupedResponse(OLD, { safety: { pii_hints: ['email'] } }, 'semantic')).toMatchObject({
      dedupe_kind: 'semantic',
      safety: { pii_hints: ['email'] },
    });
  });
});

describe('mergedResponse: evolving a memory in place', () => {
  it('answers with the merged memory, its new chunk count and the evolution trace', () => {
    const write = prepare({ text: 'Alice likes green tea from Japan every morning' });
    const decision: MergeDecision = {
      kind: 'merge',
      memoryId: OLD,
      previousText: 'Alice likes tea',
    };
    expect(mergedResponse(write, decision, {})).toEqual({
      memory_id: OLD,
      stored: true,
      extraction: { status: 'skipped', reason: 'none' },
      chunks: 1,
      intelligence: expect.objectContaining({
        canonical_hash: write.contentHash,
        conflict_state: 'none',
      }),
      trace: { memory_evolution: 'merged_into_existing', memory_evolution_applied: true },
    });
  });
});

describe('planInsert: the rows of a new memory', () => {
  const embeddings = new LocalEmbeddingProvider();
  const none: Extraction = { outcome: { status: 'skipped', reason: 'none' }, children: [] };
  const embedded = (extraction: Extraction, childVectors: number[][] = []) => ({
    ...extraction,
    childChunks: chunkChildren(extraction.children),
    childVectors,
  });
  const conflict: InsertDecision = {
    kind: 'insert',
    supersede: [{ memoryId: OLD, rule: 'conflict', details: { old_value: 'rome' } }],
  };

  it('supersedes what the decision names, and says so in events and answer', () => {
    const write = prepare({ text: 'Alice lives in Berlin', idempotency_key: 'key-0001' });
    const plan = planInsert(
      { embeddings, config: EPISODE_WINDOW },
      write,
      conflict,
      embedded(none),
      [[1, 0]],
      {},
    );
    expect(plan.memoryId).toMatch(UUID);
    expect(plan.response).toMatchObject({
      memory_id: plan.memoryId,
      superseded_memory_id: OLD,
      intelligence: { conflict_state: 'resolved' },
    });
    expect(plan.response).not.toHaveProperty('trace');
    expect(plan.memory.supersede).toEqual([OLD]);
    const workspaceId = write.space.workspaceId;
    expect(plan.memory.events).toEqual([
      { kind: 'created', workspaceId, memoryId: plan.memoryId, rule: 'write' },
      {
        kind: 'replaced',
        workspaceId,
        memoryId: OLD,
        rule: 'conflict',
        relatedMemoryId: plan.memoryId,
        details: { old_value: 'rome' },
      },
    ]);
    // Written instead only when an identical memory raced this one in.
    expect(plan.memory.racedEvents).toEqual([
      { kind: 'deduped', workspaceId, memoryId: plan.memoryId, rule: 'concurrent' },
    ]);
    expect(plan.memory.memory).toMatchObject({
      id: plan.memoryId,
      lifecycleState: 'active',
      replacedByMemoryId: null,
    });
    expect(plan.memory.chunks.vectors).toEqual([[1, 0]]);
    expect(plan.memory.recheck).toBe(true);
    expect(plan.memory.claim).toEqual({
      key: 'key-0001',
      requestHash: write.requestHash,
      response: plan.response,
    });
    expect(plan.rows).toBe(2);
  });

  it('gives each child its own chunks and vectors, and counts every row', () => {
    const write = prepare({ text: 'I love hiking. I need to renew my passport.' });
    const extraction: Extraction = {
      outcome: { status: 'run' },
      children: [
        { text: 'I love hiking.', memoryType: 'preference' },
        { text: 'I need to renew my passport.', memoryType: 'task' },
      ],
    };
    const plan = planInsert(
      { embeddings, config: EPISODE_WINDOW },
      write,
      { kind: 'insert', supersede: [] },
      embedded(extraction, [
        [0, 1],
        [1, 0],
      ]),
      [[0.6, 0.8]],
      {},
    );
    expect(plan.response.extraction).toEqual({ status: 'run' });
    expect(plan.children.map(({ memory }) => [memory.text, memory.memoryType])).toEqual([
      ['I love hiking.', 'preference'],
      ['I need to renew my passport.', 'task'],
    ]);
    expect(plan.children.map(({ chunks }) => chunks.map((chunk) => chunk.embedding))).toEqual([
      [[0, 1]],
      [[1, 0]],
    ]);
    for (const child of plan.children) {
      expect(child.memory).toMatchObject({ parentMemoryId: plan.memoryId, ownerType: 'app' });
      expect(child.memory).not.toHaveProperty('lifecycleState');
    }
    expect(plan.rows).toBe(1 + 1 + 2 + 2);
  });

  it('stores a memory kept as history already replaced, children included', () => {
    const write = prepare({
      text: 'Alice lives in Berlin. Alice loves jazz.',
      effective_at: '2020-01-01',
    });
    const decision: InsertDecision = {
      kind: 'insert',
      supersede: [],
      historyOf: { memoryId: NEWER, details: { new_value: 'rome' } },
    };
    const extraction: Extraction = {
      outcome: { status: 'run' },
      children: [{ text: 'Alice loves jazz.', memoryType: 'preference' }],
    };
    const plan = planInsert(
      { embeddings, config: EPISODE_WINDOW },
      write,
      decision,
      embedded(extraction, [[1, 0]]),
      [[1, 0]],
      {},
    );
    const history = { lifecycleState: 'replaced', replacedByMemoryId: NEWER };
    expect(plan.memory.memory).toMatchObject(history);
    expect(plan.children[0]?.memory).toMatchObject(history);
    const workspaceId = write.space.workspaceId;
    expect(plan.memory.events).toEqual([
      { kind: 'created', workspaceId, memoryId: plan.memoryId, rule: 'write' },
      {
        kind: 'replaced',
        workspaceId,
        memoryId: plan.memoryId,
        rule: 'conflict_older',
        relatedMemoryId: NEWER,
        details: { new_value: 'rome' },
      },
      {
        kind: 'extracted',
        workspaceId,
        memoryId: plan.children[0]?.memory.id,
        rule: 'extractor:none',
        relatedMemoryId: plan.memoryId,
      },
    ]);
    expect(plan.response).toMatchObject({
      intelligence: { conflict_state: 'resolved' },
      trace: { memory_evolution: 'kept_as_history_of_newer_fact', memory_evolution_applied: false },
    });
    expect(plan.response).not.toHaveProperty('superseded_memory_id');
  });

  it('does not recheck for duplicates under a deliberate rewrite, and claims nothing without a key', () => {
    const write = prepare({ text: 'Alice lives in Berlin', replaces_memory_id: OLD });
    const plan = planInsert(
      { embeddings, config: EPISODE_WINDOW },
      write,
      conflict,
      embedded(none),
      [[1, 0]],
      {
        safety: { pii_hints: ['phone'] },
      },
    );
    expect(plan.memory.recheck).toBe(false);
    expect(plan.memory.claim).toBeNull();
    // What a write that lost the race to an identical one records, less the winner's id.
    expect(plan.memory.dedupedResponse).toEqual(
      dedupedResponse('', { safety: { pii_hints: ['phone'] } }),
    );
    expect(plan.response.safety).toEqual({ pii_hints: ['phone'] });
  });
});

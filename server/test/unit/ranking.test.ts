import { describe, expect, it } from 'vitest';
import type { RecalledChunk } from '../../src/db/queries/recall.js';
import {
  FURTHER_CHUNK_SHARE,
  RRF_K,
  TIME_WINDOW_FACTOR,
  addFurtherChunks,
  applyFactor,
  blendRerank,
  candidateTokens,
  evidence,
  fuse,
  fusionWeights,
  HISTORY_FACTOR,
  historyFactor,
  memoryFactor,
  queryStems,
  relevance,
  stemCoverage,
  timeReference,
  timeWindowFactor,
  wordCoverage,
  type Candidate,
} from '../../src/services/retrieval/ranking.js';
import { timeWindowOf } from '../../src/text/time-window.js';
import { stem, stemsMeet, tokensOf, words } from '../../src/text/tokens.js';

const chunk = (id: string, score: number, extra: Partial<RecalledChunk> = {}): RecalledChunk => ({
  chunkId: id,
  memoryId: `m-${id}`,
  chunkIndex: 0,
  text: id,
  memoryType: 'note',
  importance: 1,
  confidence: null,
  feedbackScore: 0,
  pinned: false,
  sourceWeight: 1,
  parentMemoryId: null,
  createdAt: new Date(),
  effectiveAt: null,
  expiresAt: null,
  score,
  ...extra,
});

describe('fusion and scores', () => {
  it('fuses by reciprocal rank and remembers each source', () => {
    const fused = fuse([chunk('a', 0.9), chunk('b', 0.8)], [chunk('b', 0.5), chunk('c', 0.4)]);
    const b = fused.find((c) => c.chunkId === 'b')!;
    expect(b.rrfScore).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 12);
    expect(b).toMatchObject({ vectorRank: 2, textRank: 1, vectorScore: 0.8, textScore: 0.5 });
    const c = fused.find((candidate) => candidate.chunkId === 'c')!;
    expect(c.textRank).toBe(2);
    expect(c.vectorRank).toBeUndefined();
  });

  it('keeps relevance in 0..1 and lets evidence, not rank alone, decide', () => {
    const [strong] = fuse([chunk('s', 0.9)], []);
    const [weak] = fuse([chunk('w', 0.05)], []);
    strong!.wordCoverage = 1;
    weak!.wordCoverage = 0;
    const vectorOnly = fusionWeights('vector', true);
    expect(relevance(strong!, vectorOnly)).toBeCloseTo(0.35 * 0.9 + 0.65, 5);
    expect(relevance(weak!, vectorOnly)).toBeLessThan(0.45);
    // Scores, not ranks: the second keyword match, half as good, gets half the fused share.
    const [first, second] = fuse([], [chunk('k1', 1), chunk('k2', 0.5)]);
    first!.wordCoverage = second!.wordCoverage = 0.5;
    const keyword = fusionWeights('keyword', false);
    expect(relevance(first!, keyword) - relevance(second!, keyword)).toBeCloseTo(0.35 * 0.5, 10);
    expect(evidence({ vectorScore: 0.5, wordCoverage: 0.5 })).toBeCloseTo(0.75, 10);
  });

  it('weighs a weak vector recall down in hybrid fusion and evidence, nowhere else', () => {
    expect(fusionWeights('hybrid', true, 0.3)).toEqual({ vector: 0.3, text: 1, evidence: 0.3 });
    expect(fusionWeights('hybrid', false, 0.3)).toEqual({ vector: 0, text: 1, evidence: 1 });
    expect(fusionWeights('keyword', true, 0.3)).toEqual({ vector: 0, text: 1, evidence: 1 });
    expect(fusionWeights('vector', true, 0.3)).toEqual({ vector: 1, text: 0, evidence: 1 });
    expect(fusionWeights('hybrid', true)).toEqual({ vector: 1, text: 1, evidence: 1 });
    // The text recall's second place beats the vector recall's first at weight 0.3.
    const fused = fuse([chunk('v', 0.9)], [chunk('t1', 1), chunk('v2', 0.8)], 0.3);
    const v = fused.find((c) => c.chunkId === 'v')!;
    const v2 = fused.find((c) => c.chunkId === 'v2')!;
    expect(v.rrfScore).toBeCloseTo(0.3 / (RRF_K + 1), 12);
    expect(v2.rrfScore).toBeGreaterThan(v.rrfScore);
    expect(evidence({ vectorScore: 0.5, wordCoverage: 0 }, 0.3)).toBeCloseTo(0.15, 10);
    const [top] = fuse([chunk('a', 0.5)], [chunk('a', 1)], 0.3);
    top!.wordCoverage = 1;
    expect(relevance(top!, fusionWeights('hybrid', true, 0.3))).toBeCloseTo(
      0.35 * ((0.3 * 0.5 + 1) / 1.3) + 0.65,
      5,
    );
  });

  it('blends the reranker in below its cut too: an unchecked candidate never overtakes a checked one', () => {
    const ranked = fuse([], [chunk('a', 1), chunk('b', 0.9), chunk('c', 0.8)]);
    ranked.forEach((candidate, i) => (candidate.relevance = 0.5 - i * 0.05));
    // The reranker saw the first two only, and thought little of them.
    blendRerank(ranked, [0.1, 0.05], 0.3);
    const [a, b, c] = ranked;
    expect(a!.relevance).toBeCloseTo(0.7 * 0.5 + 0.3 * 0.1, 10);
    expect(b!.rerankScore).toBe(0.05);
    expect(c!.rerankScore).toBeUndefined();
    // Counted as scored 0 by the reranker: still below b (kept at 0.4, it would lead).
    expect(c!.relevance).toBeCloseTo(0.7 * 0.4, 10);
    expect(c!.relevance).toBeLessThan(b!.relevance);
  });

  it('applies factors in odds space: bounded, monotone, never saturating', () => {
    expect(applyFactor(0.5, 2)).toBeCloseTo(2 / 3, 10);
    expect(applyFactor(0.99, 3)).toBeLessThan(1);
    expect(applyFactor(0.99, 3)).toBeGreaterThan(applyFactor(0.98, 3));
    expect(applyFactor(0.2, 0.1)).toBeGreaterThan(0);
  });

  it('bounds what feedback, importance and age can do', () => {
    const now = Date.now();
    const base = {
      ...chunk('x', 0),
      rrfScore: 0,
      wordCoverage: 0,
      relevance: 0,
      score: 0,
    } as Candidate;
    const factor = (extra: Partial<Candidate>) => memoryFactor({ ...base, ...extra }, now);
    expect(factor({ feedbackScore: -100 })).toBeCloseTo(factor({ feedbackScore: -3 }), 12);
    expect(factor({ feedbackScore: -3 })).toBeGreaterThan(0.29);
    expect(factor({ feedbackScore: 1 })).toBeGreaterThan(factor({}));
    expect(factor({ importance: 100 })).toBeGreaterThan(factor({ importance: 1 }));
    expect(factor({ importance: 0.01 })).toBeLessThan(factor({ importance: 1 }));
    expect(factor({ memoryType: 'pin' })).toBeGreaterThan(factor({ memoryType: 'note' }));
    const old = factor({ createdAt: new Date(now - 3 * 365 * 86_400_000) });
    expect(old).toBeLessThan(factor({}));
    expect(old).toBeGreaterThanOrEqual(0.9);
  });

  it('demotes history (expiry passed) unless the search is about a time', () => {
    const now = Date.now();
    const base = { ...chunk('x', 0), rrfScore: 0, wordCoverage: 0, relevance: 0, score: 0 };
    const expired = { ...base, expiresAt: new Date(now - 1000) } as Candidate;
    const later = { ...base, expiresAt: new Date(now + 1000) } as Candidate;
    expect(HISTORY_FACTOR).toBeGreaterThan(0);
    expect(HISTORY_FACTOR).toBeLessThan(1);
    expect(historyFactor(expired, now, false)).toBe(HISTORY_FACTOR);
    expect(historyFactor(expired, now, true)).toBe(1);
    expect(historyFactor(later, now, false)).toBe(1);
    expect(historyFactor(base as Candidate, now, false)).toBe(1);
    // Equal relevance: the current memory ranks first.
    expect(applyFactor(0.6, historyFactor(expired, now, false))).toBeLessThan(applyFactor(0.6, 1));
  });

  it('lets further matching chunks of a long memory add to its best chunk, never to a one-chunk memory', () => {
    expect(FURTHER_CHUNK_SHARE).toBeGreaterThan(0);
    const candidate = (id: string, memoryId: string, relevance: number) =>
      ({
        ...chunk(id, 0, { memoryId }),
        rrfScore: 0,
        wordCoverage: 0,
        relevance,
        score: 0,
      }) as Candidate;
    const long = [
      candidate('a1', 'long', 0.5),
      candidate('a2', 'long', 0.4),
      candidate('a3', 'long', 0.2),
    ];
    const single = candidate('b', 'single', 0.55);
    addFurtherChunks([...long, single]);
    const best = long.find((c) => c.chunkId === 'a1')!;
    expect(best.relevance).toBeCloseTo(
      1 - 0.5 * (1 - FURTHER_CHUNK_SHARE * 0.4) * (1 - FURTHER_CHUNK_SHARE * 0.2),
      12,
    );
    expect(best.relevance).toBeLessThan(1);
    expect(long.find((c) => c.chunkId === 'a2')!.relevance).toBe(0.4);
    expect(single.relevance).toBe(0.55);
  });

  it('raises the odds of a memory dated within the period the query names, and only those', () => {
    expect(TIME_WINDOW_FACTOR).toBeGreaterThan(1);
    const at = (iso: string) =>
      ({
        ...chunk(iso, 0, { effectiveAt: new Date(iso) }),
        rrfScore: 0,
        wordCoverage: 0,
        relevance: 0,
        score: 0,
      }) as Candidate;
    const october = at('2025-10-12T18:00:00Z');
    const january = at('2026-01-20T18:00:00Z');
    const reference = timeReference([october, january], Date.parse('2026-12-06T00:00:00Z'));
    // The latest recalled memory, not the request time: "in October" is October 2025.
    expect(reference.toISOString()).toBe('2026-01-20T18:00:00.000Z');
    const window = timeWindowOf('What did Omar cook in October?', reference);
    expect(timeWindowFactor(october, window)).toBe(TIME_WINDOW_FACTOR);
    expect(timeWindowFactor(january, window)).toBe(1);
    expect(timeWindowFactor(october, undefined)).toBe(1);
    // A memory dated ahead of the request does not move the reference past it.
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(timeReference([january], now).getTime()).toBe(now);
  });
});

describe('query-word coverage from shared tokens', () => {
  /** Coverage as it was computed from the text alone: distinct stems, then prefix matches. */
  const reference = (queryTerms: Set<string>, text: string) => {
    if (queryTerms.size === 0) return 0;
    const terms = new Set(words(text).map(stem));
    let found = 0;
    for (const term of queryTerms)
      if (terms.has(term) || [...terms].some((other) => stemsMeet(term, other))) found += 1;
    return found / queryTerms.size;
  };

  const texts = [
    'My sister moved to Lisbon; she is allergic to peanuts and plays the cello.',
    'Allergies, musicians and music: the festival moved again.',
    'Nothing here matches.',
    '',
    'Who is it? It is me.',
  ];
  const queries = ['sister allergies Lisbon', 'music festival', 'who is it', '?!'];

  it('equals coverage of the text for every query and text', () => {
    for (const query of queries)
      for (const text of texts) {
        const terms = queryStems(query);
        const expected = reference(terms, text);
        expect(stemCoverage(terms, tokensOf(text).stems)).toBe(expected);
        expect(wordCoverage(terms, text)).toBe(expected);
      }
  });

  it('cuts a candidate’s text once, however many scorers read it', () => {
    const [candidate] = fuse([chunk('c', 0.5, { text: texts[0]! })], []);
    expect(candidate!.tokens).toBeUndefined();
    const first = candidateTokens(candidate!);
    expect(first).toEqual(tokensOf(texts[0]!));
    expect(candidateTokens(candidate!)).toBe(first);
  });
});

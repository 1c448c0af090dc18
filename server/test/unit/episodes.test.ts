import { describe, expect, it } from 'vitest';
import type { EpisodeNeighbour } from '../../src/db/queries/episodes.js';
import { addEpisodeContext } from '../../src/services/retrieval/episodes.js';
import type { Candidate } from '../../src/services/retrieval/ranking.js';

const memory = (id: string) => ({
  chunkId: `chunk-${id}`,
  memoryId: id,
  chunkIndex: 0,
  text: `memory ${id}`,
  memoryType: 'fact',
  importance: 0.5,
  confidence: null,
  feedbackScore: 0,
  pinned: false,
  sourceWeight: 1,
  parentMemoryId: null,
  createdAt: new Date('2026-01-01T00:00:00Z'),
  effectiveAt: null,
  expiresAt: null,
});

const candidate = (id: string, relevance: number): Candidate => ({
  ...memory(id),
  rrfScore: 0,
  wordCoverage: 0.5,
  relevance,
  score: 0,
});

const neighbour = (seed: string, id: string): EpisodeNeighbour => ({
  ...memory(id),
  seedMemoryId: seed,
  step: 1,
});

describe('episode context', () => {
  const profile = { episodeShare: 0.5, episodeSeeds: 2 };

  it('seeds only memories whose neighbours the search read, strongest first', () => {
    // b is stronger than c, but its neighbours were not read: a and c seed, b does not.
    const candidates = [candidate('a', 0.9), candidate('b', 0.8), candidate('c', 0.7)];
    const read = {
      seeds: new Set(['a', 'c', 'd']),
      rows: [neighbour('a', 'after-a'), neighbour('c', 'after-c'), neighbour('d', 'after-d')],
    };
    const result = addEpisodeContext(read, candidates, profile, 1800);
    const added = result.slice(candidates.length);
    expect(added.map((c) => c.memoryId).sort()).toEqual(['after-a', 'after-c']);
    // A neighbour the recalls missed takes the seed's share of relevance (no words: capped).
    const afterA = added.find((c) => c.memoryId === 'after-a')!;
    const afterC = added.find((c) => c.memoryId === 'after-c')!;
    expect(afterA.relevance).toBeGreaterThan(afterC.relevance);
    expect(afterC.relevance).toBeGreaterThan(0);
  });

  it('adds nothing when no candidate was read, or when episode context is off', () => {
    const candidates = [candidate('b', 0.8)];
    const read = { seeds: new Set(['a']), rows: [neighbour('a', 'after-a')] };
    expect(addEpisodeContext(read, candidates, profile, 1800)).toEqual(candidates);
    const withA = [candidate('a', 0.9)];
    expect(addEpisodeContext(read, withA, { ...profile, episodeShare: 0 }, 1800)).toEqual(withA);
    expect(addEpisodeContext(read, withA, profile, 0)).toEqual(withA);
    expect(addEpisodeContext(read, withA, profile, 1800)).toHaveLength(2);
  });
});

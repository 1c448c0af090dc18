import type { ReadNeighbours } from '../../db/queries/search-recall.js';
import { candidateOf, type Candidate, type ProfileSettings } from './ranking.js';

/** Memories on each side of a match that share its relevance. */
export const EPISODE_SPAN = 2;

/** Each step further from the match halves the share (the turn after next still often answers). */
const STEP_DECAY = 0.5;
/**
 * Most relevance episode context gives a memory that has no word in common with the query: enough
 * to rank it among weak matches, not enough to pass `min_score: 0.5` (with the default memory
 * factors, about ×1.1 in odds, it scores about 0.43). Measured on LoCoMo under
 * leave-conversations-out (bench/locomo.ts): −0.4 R@10 against no ceiling (0.3: −0.8), and
 * precision at min_score 0.5 from 15.0 to 16.9 %.
 */
export const CONTEXT_CEILING = 0.4;

/**
 * A memory's relevance with an episode share added, as an independent signal
 * (1 − (1−r)(1−s)). For a memory with no query word (`wordCoverage` 0) the result stays at or
 * below CONTEXT_CEILING unless its own relevance is higher: context reorders what matches, it does
 * not make a match.
 */
export function withEpisodeShare(relevance: number, share: number, wordCoverage = 0): number {
  const combined = 1 - (1 - relevance) * (1 - share);
  if (wordCoverage > 0) return combined;
  return Math.max(relevance, Math.min(combined, CONTEXT_CEILING));
}

/**
 * Episode context: memories written one after another in one conversation read as one story.
 * "For walking or running?" answers nothing alone; it is the turn before "Running, mostly" that
 * a question about new shoes needs. So the memories written just before and just after a strong
 * match (two on each side, the second at half the share), within the same episode (see
 * {@link episodeNeighbours}), share a part of its relevance:
 * a neighbour the recalls missed joins the candidates with `share × the seed's relevance` (at
 * most CONTEXT_CEILING); one they found adds that share to its own relevance (see
 * withEpisodeShare).
 * Measured on LoCoMo (bench/locomo.ts); it is the "sentence window" of retrieval, applied to
 * memories.
 */
export function addEpisodeContext(
  /** The neighbours the search's one statement read (`SearchRecall.neighbours`). */
  read: ReadNeighbours,
  candidates: Candidate[],
  profile: Pick<ProfileSettings, 'episodeShare' | 'episodeSeeds'>,
  windowSeconds: number,
): Candidate[] {
  if (profile.episodeShare <= 0 || windowSeconds <= 0 || candidates.length === 0) return candidates;

  const bestByMemory = new Map<string, Candidate>();
  for (const candidate of candidates) {
    const best = bestByMemory.get(candidate.memoryId);
    if (!best || candidate.relevance > best.relevance)
      bestByMemory.set(candidate.memoryId, candidate);
  }
  // Seeds among the memories whose neighbours were read, so the search needs no second round
  // trip. A memory that ranking lifted from past both recalls' first chunks cannot seed (measured
  // on LoCoMo against looking its neighbours up: R@10 74.9 vs 74.8, fold mean 75.6 both).
  const seeds = [...bestByMemory.values()]
    .filter((candidate) => read.seeds.has(candidate.memoryId))
    .sort((a, b) => b.relevance - a.relevance)
    .slice(0, profile.episodeSeeds)
    .filter((seed) => seed.relevance > 0);
  if (seeds.length === 0) return candidates;
  const seedRelevance = new Map(seeds.map((seed) => [seed.memoryId, seed.relevance]));
  const neighbours = read.rows.filter((row) => seedRelevance.has(row.seedMemoryId));
  // The strongest seed beside each neighbour decides its share; shares come from relevance
  // before any of them is applied, so the order of seeds does not matter.
  const shares = new Map<string, { share: number; neighbour: (typeof neighbours)[number] }>();
  for (const neighbour of neighbours) {
    const share =
      profile.episodeShare *
      STEP_DECAY ** (neighbour.step - 1) *
      (seedRelevance.get(neighbour.seedMemoryId) ?? 0);
    const known = shares.get(neighbour.memoryId);
    if (!known || share > known.share) shares.set(neighbour.memoryId, { share, neighbour });
  }

  const chunksByMemory = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    const chunks = chunksByMemory.get(candidate.memoryId);
    if (chunks) chunks.push(candidate);
    else chunksByMemory.set(candidate.memoryId, [candidate]);
  }
  const added: Candidate[] = [];
  for (const [memoryId, { share, neighbour }] of shares) {
    const found = chunksByMemory.get(memoryId) ?? [];
    for (const candidate of found)
      candidate.relevance = withEpisodeShare(candidate.relevance, share, candidate.wordCoverage);
    if (found.length > 0) continue;
    const candidate = candidateOf(neighbour);
    candidate.relevance = withEpisodeShare(0, share);
    added.push(candidate);
  }
  return added.length > 0 ? [...candidates, ...added] : candidates;
}

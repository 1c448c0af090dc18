import type { RecalledChunk } from '../../db/queries/recall.js';
import type { TimeWindow } from '../../text/time-window.js';
import {
  contentStems,
  stem,
  stemsMeet,
  tokensOf,
  words,
  type TextTokens,
} from '../../text/tokens.js';

/** Reciprocal rank fusion constant (Cormack et al.): damps the weight of the very top ranks. */
export const RRF_K = 60;

export type RetrievalProfile = 'balanced' | 'recall' | 'precision';
export type SearchMode = 'hybrid' | 'vector' | 'keyword';

export interface ProfileSettings {
  /** Candidates each recall fetches. */
  recallLimit: number;
  /** Fused candidates the reranker sees. */
  rerankTop: number;
  /** Share of the reranker's score in relevance after reranking. */
  rerankWeight: number;
  /** min_score when the request gives none. */
  defaultMinScore: number;
  /** Candidates with less direct evidence (vector or word overlap) than this are dropped. */
  minEvidence: number;
  /** Share of a strong match's relevance its episode neighbours receive (0: no episode context). */
  episodeShare: number;
  /** Best memories whose episode neighbours are looked up. */
  episodeSeeds: number;
}

/**
 * `recall` looks wider and filters nothing extra; `precision` looks narrower, trusts the
 * reranker more, drops weak matches and returns direct matches only (no episode context).
 */
export const PROFILES: Record<RetrievalProfile, ProfileSettings> = {
  balanced: {
    recallLimit: 50,
    rerankTop: 30,
    rerankWeight: 0.3,
    defaultMinScore: 0,
    minEvidence: 0.05,
    episodeShare: 0.7,
    episodeSeeds: 20,
  },
  recall: {
    recallLimit: 150,
    rerankTop: 50,
    rerankWeight: 0.2,
    defaultMinScore: 0,
    minEvidence: 0,
    episodeShare: 0.7,
    episodeSeeds: 40,
  },
  precision: {
    recallLimit: 30,
    rerankTop: 30,
    rerankWeight: 0.5,
    defaultMinScore: 0.3,
    minEvidence: 0.15,
    episodeShare: 0,
    episodeSeeds: 0,
  },
};

export interface Candidate extends Omit<RecalledChunk, 'score' | 'coverage'> {
  vectorRank?: number;
  textRank?: number;
  vectorScore?: number;
  textScore?: number;
  rrfScore: number;
  /** Share of the query's content words found in the chunk (0..1). */
  wordCoverage: number;
  /** Relevance to the query alone (0..1), before lifecycle and learning factors. */
  relevance: number;
  rerankScore?: number;
  /** Final score (0..1). */
  score: number;
  /** Other members of its fact that matched (see oneResultPerFact), best first. */
  related?: Candidate[];
  /** Its text's tokens, once a scorer has read them (see candidateTokens). */
  tokens?: TextTokens;
}

/**
 * Fuses the recalls by weighted RRF; each list must be in rank order. `vectorWeight` scales the
 * vector recall's share (the embedder's fusionWeight): a weak recall at full weight dilutes a
 * strong one.
 */
export function fuse(
  vector: RecalledChunk[],
  text: RecalledChunk[],
  vectorWeight = 1,
): Candidate[] {
  const byChunk = new Map<string, Candidate>();
  vector.forEach((chunk, index) => {
    const candidate = candidateOf(chunk);
    candidate.vectorRank = index + 1;
    candidate.vectorScore = Math.max(0, chunk.score);
    candidate.rrfScore += vectorWeight / (RRF_K + index + 1);
    byChunk.set(chunk.chunkId, candidate);
  });
  text.forEach((chunk, index) => {
    let candidate = byChunk.get(chunk.chunkId);
    if (!candidate) byChunk.set(chunk.chunkId, (candidate = candidateOf(chunk)));
    candidate.textRank = index + 1;
    candidate.textScore = chunk.score;
    candidate.rrfScore += 1 / (RRF_K + index + 1);
  });
  return [...byChunk.values()];
}

/**
 * A chunk as a candidate with nothing scored yet. Field by field, every field present: it runs for
 * every recalled chunk, and copying by spread (or rest) was a measurable share of a search's CPU.
 */
export function candidateOf(chunk: Omit<RecalledChunk, 'score' | 'coverage'>): Candidate {
  return {
    chunkId: chunk.chunkId,
    memoryId: chunk.memoryId,
    chunkIndex: chunk.chunkIndex,
    text: chunk.text,
    memoryType: chunk.memoryType,
    importance: chunk.importance,
    confidence: chunk.confidence,
    feedbackScore: chunk.feedbackScore,
    pinned: chunk.pinned,
    sourceWeight: chunk.sourceWeight,
    parentMemoryId: chunk.parentMemoryId,
    createdAt: chunk.createdAt,
    effectiveAt: chunk.effectiveAt,
    expiresAt: chunk.expiresAt,
    vectorRank: undefined,
    textRank: undefined,
    vectorScore: undefined,
    textScore: undefined,
    rrfScore: 0,
    wordCoverage: 0,
    relevance: 0,
    rerankScore: undefined,
    score: 0,
    tokens: undefined,
  };
}

/** A candidate's tokens: its text is cut on the first call and the same tokens returned after. */
export function candidateTokens(candidate: Candidate): TextTokens {
  return (candidate.tokens ??= tokensOf(candidate.text));
}

/** Query stems, once per query: content words, or every word when the query has none. */
export function queryStems(query: string): Set<string> {
  const stems = contentStems(query);
  return new Set(stems.length > 0 ? stems : words(query).map(stem));
}

/** Share of the query stems the text holds, as the keyword index matches them (stemsMeet). */
export function wordCoverage(queryTerms: Set<string>, text: string): number {
  return stemCoverage(queryTerms, words(text).map(stem));
}

/** {@link wordCoverage} of a text already cut into `stems` (TextTokens.stems). */
export function stemCoverage(queryTerms: Set<string>, stems: readonly string[]): number {
  if (queryTerms.size === 0) return 0;
  let found = 0;
  for (const term of queryTerms)
    for (const other of stems)
      if (stemsMeet(term, other)) {
        found += 1;
        break;
      }
  return found / queryTerms.size;
}

/**
 * The fused recall scores' share of relevance; direct evidence has the rest. (0.15 measured the
 * same on LoCoMo within noise, but lowers every score and so what `min_score` and the precision
 * profile keep.)
 */
export const RANK_SHARE = 0.35;

/**
 * Relevance in 0..1 from the recalls' own scores (BM25 relative to the best match, cosine
 * similarity), weighted like the fusion, and direct evidence (how well it matches at all). Scores,
 * not ranks: RRF ranks say that the tenth keyword match placed tenth, not that it matched half as
 * well as the first (measured on LoCoMo: 1.5 points of R@10). Evidence keeps `min_score`
 * meaningful, since the best of bad matches still has a relative score of 1.
 */
export function relevance(candidate: Candidate, weights: FusionWeights): number {
  const total = weights.vector + weights.text;
  const vector = Math.min(1, Math.max(0, candidate.vectorScore ?? 0));
  const fused =
    total > 0 ? (weights.vector * vector + weights.text * (candidate.textScore ?? 0)) / total : 0;
  return RANK_SHARE * fused + (1 - RANK_SHARE) * evidence(candidate, weights.evidence);
}

/**
 * Blends a reranker's scores into relevance: `ranked` holds every candidate, best relevance first,
 * and `scores` the reranker's for the first `scores.length` of them. A candidate below that cut
 * counts as scored 0. Left at its own relevance it would overtake candidates the reranker checked
 * (the blend mostly lowers them: the local reranker scores well below relevance), and the cut
 * would shuffle weak matches into the top ranks.
 */
export function blendRerank(ranked: Candidate[], scores: number[], weight: number): void {
  ranked.forEach((candidate, i) => {
    if (i < scores.length) candidate.rerankScore = scores[i] ?? 0;
    candidate.relevance =
      (1 - weight) * candidate.relevance + weight * (candidate.rerankScore ?? 0);
  });
}

/**
 * How much each further matching chunk of a memory adds to its best chunk's relevance. A long
 * memory (a whole chat session, a document) that matches in several places is a better match than
 * one that matches once as well as its best place does; a memory of one chunk is unaffected.
 * Chosen among 0, 0.1, 0.25 and 0.5 by leave-one-conversation-out on the bench's session
 * granularity (bench/locomo.ts; results in bench/results/quality-2026-12-06.md).
 */
export const FURTHER_CHUNK_SHARE = 0.1;

/**
 * Memory-level relevance: the best recalled chunk of each memory takes the other recalled chunks
 * of that memory as independent further evidence (1 − (1−r₀)·Π(1 − share·rᵢ)). Other chunks keep
 * their own relevance: one result per memory shows the best one.
 */
export function addFurtherChunks(candidates: Candidate[], share = FURTHER_CHUNK_SHARE): void {
  if (share <= 0) return;
  const byMemory = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    const chunks = byMemory.get(candidate.memoryId);
    if (chunks) chunks.push(candidate);
    else byMemory.set(candidate.memoryId, [candidate]);
  }
  for (const chunks of byMemory.values()) {
    if (chunks.length < 2) continue;
    chunks.sort((a, b) => b.relevance - a.relevance);
    const best = chunks[0]!;
    let missing = 1 - best.relevance;
    for (const other of chunks.slice(1)) missing *= 1 - share * other.relevance;
    best.relevance = 1 - missing;
  }
}

/** What each recall that ran counts for in one search (0 for a recall that did not run). */
export interface FusionWeights {
  vector: number;
  text: number;
  /** The embedding similarity's weight in evidence: the vector weight when word evidence is there too. */
  evidence: number;
}

/** The weights of a search in `mode` with an embedder of `fusionWeight`. */
export function fusionWeights(
  mode: SearchMode,
  embedded: boolean,
  fusionWeight = 1,
): FusionWeights {
  if (mode === 'keyword' || !embedded) return { vector: 0, text: 1, evidence: 1 };
  if (mode === 'vector') return { vector: 1, text: 0, evidence: 1 };
  return { vector: fusionWeight, text: 1, evidence: fusionWeight };
}

/**
 * Direct evidence of a match: the embedding similarity (scaled by its weight) and the query-word
 * coverage combined as independent signals (1 - (1-v)(1-c)), so each adds to the other instead of
 * the larger one hiding the smaller.
 */
export function evidence(
  candidate: Pick<Candidate, 'vectorScore' | 'wordCoverage'>,
  vectorWeight = 1,
): number {
  const vector = vectorWeight * Math.min(1, Math.max(0, candidate.vectorScore ?? 0));
  return 1 - (1 - vector) * (1 - candidate.wordCoverage);
}

const TYPE_WEIGHT: Record<string, number> = {
  pin: 1.3,
  correction: 1.2,
  fact: 1.1,
  preference: 1.1,
  event: 1,
  task: 1,
  note: 1,
};

const DAY_MS = 86_400_000;

/**
 * How much a memory's own qualities move its odds, independent of the query: type (pinned
 * memories count as pins), source weight (extracted children 0.8), importance
 * (the spec's ranking multiplier), confidence, explicit feedback (×1.5 per full vote, bounded:
 * ±3 votes at most, ×3.3 / ×0.30) and freshness (±10% over half a year).
 */
export function memoryFactor(candidate: Candidate, now: number): number {
  const type = Math.max(
    TYPE_WEIGHT[candidate.memoryType] ?? 1,
    candidate.pinned ? (TYPE_WEIGHT.pin ?? 1) : 0,
  );
  const source = Math.min(1.1, Math.max(0.5, candidate.sourceWeight));
  const importance = Math.pow(Math.min(100, Math.max(0.01, candidate.importance)), 0.2);
  const confidence =
    candidate.confidence === null ? 1 : 0.6 + 0.4 * Math.min(1, Math.max(0, candidate.confidence));
  const feedback = Math.exp(0.4 * Math.min(3, Math.max(-3, candidate.feedbackScore)));
  const at = (candidate.effectiveAt ?? candidate.createdAt).getTime();
  const ageDays = Math.max(0, (now - at) / DAY_MS);
  const freshness = 0.9 + 0.2 * Math.exp(-ageDays / 180);
  return type * source * importance * confidence * feedback * freshness;
}

/**
 * A memory whose time-bound wording has expired ("this week", "next month", dated in the past) is
 * history: no longer current truth, but still the answer to a question about its own time, so
 * every search recalls it (see RecallFilter.history). For a search that is not about a time it
 * ranks below a current memory of equal relevance: its odds are halved, so history outranks
 * current truth only when it matches clearly better. A design value, not a tuned one: LoCoMo
 * asks only about past sessions, so there any demotion can only cost (measured 2026-11-25, R@10
 * full dev: ×1 75.4, ×0.5 74.8, ×0.25 74.2, ×0.1 73.6; history left out 73.6).
 */
export const HISTORY_FACTOR = 0.5;

/**
 * The multiplier of a candidate's odds for being history: HISTORY_FACTOR when its `expires_at`
 * has passed and the search is not about a time (`aboutTime`), 1 otherwise.
 */
export function historyFactor(candidate: Candidate, now: number, aboutTime: boolean): number {
  if (aboutTime || candidate.expiresAt === null) return 1;
  return candidate.expiresAt.getTime() <= now ? HISTORY_FACTOR : 1;
}

/**
 * How much a memory dated within the period a query names ("in October", "July 2022", "two weeks
 * ago": see timeWindowOf) gains in odds. Soft: a memory from another time still ranks by what it
 * says, and a question about a period is often answered by a memory written just after it.
 * Chosen among 1, 1.25, 1.5, 2 and 3 by leave-one-conversation-out on the LoCoMo bench (every
 * fold chose 3; results in bench/results/quality-2026-12-06.md). Larger factors were not tried:
 * past ×3 the boost starts to act as a filter.
 */
export const TIME_WINDOW_FACTOR = 3;

/**
 * The multiplier of a candidate's odds for the period the query names: TIME_WINDOW_FACTOR when
 * its time (`effective_at`, else `created_at`) lies within `window`, 1 otherwise or without one.
 */
export function timeWindowFactor(candidate: Candidate, window: TimeWindow | undefined): number {
  if (!window) return 1;
  const at = (candidate.effectiveAt ?? candidate.createdAt).getTime();
  return at >= window.from.getTime() && at <= window.to.getTime() ? TIME_WINDOW_FACTOR : 1;
}

/**
 * What a relative period ("two weeks ago", "in October") counts from: the latest of the recalled
 * memories' times, unless that lies ahead of the request. For an owner whose memories run up to
 * now that is about now; for an imported record of the past it is that record's "now", as its
 * own people would have meant it. Read from the candidates: no extra round trip.
 */
export function timeReference(candidates: Candidate[], now: number): Date {
  let latest = 0;
  for (const candidate of candidates) {
    const at = (candidate.effectiveAt ?? candidate.createdAt).getTime();
    if (at > latest) latest = at;
  }
  return new Date(latest > 0 ? Math.min(latest, now) : now);
}

/**
 * Applies a multiplier in odds space: the score stays in 0..1, keeps its order among equals and
 * never saturates at 1 (a clamp would make the strongest results tie).
 */
export function applyFactor(probability: number, factor: number): number {
  const p = Math.min(0.999, Math.max(0.001, probability));
  const odds = (p / (1 - p)) * factor;
  return odds / (1 + odds);
}

export function byScore(a: Candidate, b: Candidate): number {
  return b.score - a.score || a.chunkId.localeCompare(b.chunkId);
}

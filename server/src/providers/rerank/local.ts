import { STOPWORDS, contentStems, stem, tokensOf, words } from '../../text/tokens.js';
import type { RerankOptions, Reranker } from './types.js';

// The three signals, each in 0..1, blended with weights that sum to 1. Coverage dominates: a
// document missing query words should not win on arrangement alone. Proximity and phrase only
// reorder documents of similar coverage.
/** Share of the query's stems present in the document, IDF-weighted. */
const COVERAGE_WEIGHT = 0.7;
/** How tightly the matched stems cluster (smallest window containing all of them). */
const PROXIMITY_WEIGHT = 0.2;
/** Share of the query's consecutive stem pairs that also appear consecutively in the document. */
const PHRASE_WEIGHT = 0.1;

const allStems = (text: string) => words(text).map(stem);

/**
 * The default reranker: a lexical cross-check of each candidate against the query, with no
 * network and no model. Hybrid recall already ranked by vectors and full text; this pass looks
 * at what those scores blur: whether the document has the query's *rare* words (IDF estimated
 * over the candidates themselves), whether the matched words sit together, and whether the
 * query's word pairs appear as phrases.
 *
 * Score = 0.7 coverage + 0.2 proximity + 0.1 phrase, in 0..1. A query with a single distinct
 * stem has no proximity or phrase to speak of, so its score is the coverage alone (0 or 1). A
 * query of stopwords only ("what is it") is matched on all its words instead; a query with no
 * words at all, and a document with none, score 0. Deterministic; ~tens of microseconds per
 * 1,000-character document.
 */
export class LocalReranker implements Reranker {
  readonly name = 'local';

  async rerank(query: string, documents: string[], options?: RerankOptions): Promise<number[]> {
    return this.score(query, documents, options);
  }

  /** The synchronous core of {@link rerank}; documents are cut by `options.tokensOf` when given. */
  score(query: string, documents: string[], { tokensOf: given }: RerankOptions = {}): number[] {
    let contentOnly = true;
    let queryStems = contentStems(query);
    if (queryStems.length === 0) {
      contentOnly = false;
      queryStems = allStems(query);
    }
    const termIds = new Map<string, number>();
    for (const term of queryStems) if (!termIds.has(term)) termIds.set(term, termIds.size);
    const termCount = termIds.size;
    if (termCount === 0) return documents.map(() => 0);

    // Bigrams as `first * termCount + second`: cheap to hash, no string building per token.
    const bigrams = new Set<number>();
    for (let i = 0; i + 1 < queryStems.length; i += 1) {
      const first = termIds.get(queryStems[i]!)!;
      const second = termIds.get(queryStems[i + 1]!)!;
      if (first !== second) bigrams.add(first * termCount + second);
    }

    // Each document as the sequence of query-term ids (-1 for any other word), so every later
    // pass is integer work. Positions count the same tokens the query was cut into: in content
    // mode, stopwords between two matches do not push them apart ("bank of america").
    const sequences = documents.map((document, index) => {
      const tokens = given ? given(index) : tokensOf(document);
      const sequence: number[] = [];
      for (let i = 0; i < tokens.words.length; i += 1)
        if (!contentOnly || !STOPWORDS.has(tokens.words[i]!))
          sequence.push(termIds.get(tokens.stems[i]!) ?? -1);
      return sequence;
    });
    const present = sequences.map((sequence) => {
      const seen = new Uint8Array(termCount);
      for (const id of sequence) if (id >= 0) seen[id] = 1;
      return seen;
    });

    const total = documents.length;
    const idf = new Float64Array(termCount);
    let idfSum = 0;
    for (let term = 0; term < termCount; term += 1) {
      let df = 0;
      for (const seen of present) df += seen[term]!;
      // BM25's IDF with the +1 inside the log, so it stays positive even for a term every
      // candidate has: common words count a little, rare ones a lot.
      idf[term] = Math.log(1 + (total - df + 0.5) / (df + 0.5));
      idfSum += idf[term]!;
    }

    return sequences.map((sequence, index) => {
      const seen = present[index]!;
      let coverage = 0;
      let matched = 0;
      for (let term = 0; term < termCount; term += 1) {
        if (seen[term] === 1) {
          coverage += idf[term]!;
          matched += 1;
        }
      }
      if (matched === 0) return 0;
      coverage /= idfSum;
      if (termCount < 2) return coverage;

      // One matched word is not "close" to anything; the share of query links that could be
      // checked scales the bonus, so two adjacent words out of five do not earn the full 0.2.
      const proximity =
        matched < 2
          ? 0
          : (matched / smallestWindow(sequence, termCount, matched)) *
            ((matched - 1) / (termCount - 1));
      const phrase =
        bigrams.size === 0 ? 0 : phraseHits(sequence, bigrams, termCount) / bigrams.size;

      const score =
        COVERAGE_WEIGHT * coverage + PROXIMITY_WEIGHT * proximity + PHRASE_WEIGHT * phrase;
      // The weights sum to 1 only up to rounding.
      return Math.min(1, score);
    });
  }
}

/**
 * Length in tokens of the shortest stretch of `sequence` holding every one of the `matched`
 * distinct query terms it contains (a sliding window over the matching positions only).
 */
function smallestWindow(sequence: number[], termCount: number, matched: number): number {
  const positions: number[] = [];
  for (let i = 0; i < sequence.length; i += 1) if (sequence[i]! >= 0) positions.push(i);
  const counts = new Uint32Array(termCount);
  let inside = 0;
  let best = Infinity;
  let left = 0;
  for (const right of positions) {
    const term = sequence[right]!;
    if (counts[term] === 0) inside += 1;
    counts[term] = counts[term]! + 1;
    while (inside === matched) {
      const start = positions[left]!;
      best = Math.min(best, right - start + 1);
      const leaving = sequence[start]!;
      counts[leaving] = counts[leaving]! - 1;
      if (counts[leaving] === 0) inside -= 1;
      left += 1;
    }
  }
  return best;
}

/** How many distinct query bigrams occur as adjacent tokens in `sequence`. */
function phraseHits(sequence: number[], bigrams: Set<number>, termCount: number): number {
  const found = new Set<number>();
  for (let i = 0; i + 1 < sequence.length; i += 1) {
    const first = sequence[i]!;
    const second = sequence[i + 1]!;
    if (first < 0 || second < 0) continue;
    const key = first * termCount + second;
    if (bigrams.has(key)) found.add(key);
  }
  return found.size;
}

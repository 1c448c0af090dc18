import { STOPWORDS, contentStems, stem, words } from '../../text/tokens.js';
import type { EmbeddingProvider, EmbeddingPurpose } from './types.js';
import type { WordVectors } from './word-vectors.js';

/** The hashed lexical features' dimension (the whole vector without a word-vector table). */
export const LOCAL_EMBEDDING_DIMENSION = 256;
/** With the word-vector table: lexical features, word-vector sentence, zero padding to 384. */
export const LOCAL_SEMANTIC_EMBEDDING_DIMENSION = 384;
/** The local embedder's weight in hybrid fusion (see EmbeddingProvider.fusionWeight). */
export const LOCAL_FUSION_WEIGHT = 0.1;
/**
 * The word-vector part's share of a text the table knows whole (scaled by how much of the text
 * it knows: WordVectors.coverage): each part is unit length and scaled by the square root of its
 * share, so for two such texts cosine = (1 - s) · lexical + s · semantic. Chosen
 * leave-conversations-out on LoCoMo dev (bench/results/quality-latest.md): 0.5 and 0.7 tie in
 * hybrid search (R@10 fold mean 73.9 / 74.1, within noise); 0.5 keeps vector search 2.4 points
 * higher (R@10 58.2 vs 55.8). Fusion weight 0.3 instead of 0.1 did not hold on held-out folds.
 * Kept, not tuned again, when the share began to follow coverage.
 */
export const LOCAL_SEMANTIC_SHARE = 0.5;

/** FNV-1a, 32 bit: fast, well spread, and the same on every machine. */
function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

// Feature weights: whole stems carry the meaning; bigrams add phrase order; character trigrams
// let "Berlin"/"Berliner" or a typo still meet.
const UNIGRAM_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
const TRIGRAM_WEIGHT = 0.3;

export interface LocalEmbeddingOptions {
  /**
   * Word vectors (see word-vectors.ts): adds a SIF-weighted word-vector sentence to the lexical
   * features, so near-synonyms meet ("musical instrument", "guitar"). Without it the embedder is
   * the lexical `mnemo-local-v2`, 256 dimensions, exactly as before.
   */
  wordVectors?: WordVectors;
}

/**
 * The default embedder: signed feature hashing of content-word stems, stem bigrams and
 * character trigrams, log-scaled term frequency, L2-normalised (lexical overlap, with stemming
 * and sub-word matches); with a word-vector table, beside it a SIF-weighted word-vector sentence
 * (near-synonyms). No network, deterministic, microseconds per text.
 */
export class LocalEmbeddingProvider implements EmbeddingProvider {
  readonly provider = 'local';
  readonly model: string;
  readonly dimension: number;
  readonly version: string;
  private readonly wordVectors: WordVectors | undefined;

  constructor({ wordVectors }: LocalEmbeddingOptions = {}) {
    this.wordVectors = wordVectors;
    if (wordVectors) {
      this.model = 'mnemo-local-v3';
      this.dimension = LOCAL_SEMANTIC_EMBEDDING_DIMENSION;
      // The table's fingerprint: another table embeds the same text differently. "v3.1": the
      // word-vector share follows the table's coverage of the text (the opt-in v3 before it gave
      // every text with a known word half).
      this.version = `local:mnemo-local-v3.1:${this.dimension}:${wordVectors.fingerprint}`;
    } else {
      this.model = 'mnemo-local-v2';
      this.dimension = LOCAL_EMBEDDING_DIMENSION;
      this.version = `local:mnemo-local-v2:${LOCAL_EMBEDDING_DIMENSION}`;
    }
  }

  /**
   * Measured on LoCoMo (bench/locomo.ts): at weight 1 hybrid fell 5 points of R@10 below keyword
   * recall alone; at 0.1 to 0.3 it lands within ±0.6 points of keyword recall at every k.
   */
  readonly fusionWeight = LOCAL_FUSION_WEIGHT;
  /** Microseconds per text, no network: cheaper than a round trip (see EmbeddingProvider). */
  readonly inProcess = true;

  async embed(texts: string[], _purpose: EmbeddingPurpose): Promise<number[][]> {
    return texts.map((text) => this.embedOne(text));
  }

  embedOne(text: string): number[] {
    const lexical = this.lexical(text);
    if (!this.wordVectors) return lexical;
    const vector = new Array<number>(this.dimension).fill(0);
    const content = words(text).filter((word) => !STOPWORDS.has(word));
    const semantic = this.wordVectors.sentence(content);
    // The word-vector part speaks only for the words the table knows: its share shrinks with
    // them. Otherwise two texts that differ only in a code or a name it does not know
    // ("Carol code 3f2a…", "Carol code 9b1c…") meet at word-vector cosine 1, and their whole
    // cosine rises with it over the semantic-dedupe threshold. Text without a known word keeps
    // its lexical direction alone (still unit length).
    const share = LOCAL_SEMANTIC_SHARE * this.wordVectors.coverage(content);
    const lexicalScale = Math.sqrt(1 - share);
    const semanticScale = Math.sqrt(share);
    lexical.forEach((value, i) => (vector[i] = lexicalScale * value));
    semantic.forEach((value, i) => (vector[LOCAL_EMBEDDING_DIMENSION + i] = semanticScale * value));
    return vector;
  }

  /** The hashed lexical features alone (mnemo-local-v2), unit length. */
  private lexical(text: string): number[] {
    const features = new Map<string, number>();
    const add = (feature: string, weight: number) =>
      features.set(feature, (features.get(feature) ?? 0) + weight);

    // Only stopwords ("is it?") still deserve a direction, and so does text with no words at
    // all: a zero vector has no cosine.
    let stems = contentStems(text);
    if (stems.length === 0) stems = words(text).map(stem);
    if (stems.length === 0) add(`t:${text.trim()}`, UNIGRAM_WEIGHT);
    stems.forEach((term, i) => {
      add(`w:${term}`, UNIGRAM_WEIGHT);
      const next = stems[i + 1];
      if (next !== undefined) add(`b:${term} ${next}`, BIGRAM_WEIGHT);
      const padded = `#${term}#`;
      if (padded.length > 4) {
        const share = TRIGRAM_WEIGHT / Math.sqrt(padded.length - 2);
        for (let j = 0; j + 3 <= padded.length; j += 1) add(`c:${padded.slice(j, j + 3)}`, share);
      }
    });

    const vector = new Array<number>(LOCAL_EMBEDDING_DIMENSION).fill(0);
    for (const [feature, weight] of features) {
      const hash = fnv1a(feature);
      const sign = hash & 0x80000000 ? -1 : 1;
      // Sub-linear term frequency: a word said five times is not five times the topic.
      vector[hash % LOCAL_EMBEDDING_DIMENSION]! +=
        sign * (1 + Math.log(weight > 1 ? weight : 1)) * Math.min(weight, 1);
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    norm = Math.sqrt(norm);
    return norm === 0 ? vector : vector.map((value) => value / norm);
  }
}

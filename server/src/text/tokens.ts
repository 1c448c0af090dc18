/**
 * Shared text normalisation: the local embedder, dedupe and (later) extraction must agree on
 * what a word is.
 */

import { createRequire } from 'node:module';
import english from './lang/en.json' with { type: 'json' };

// A CommonJS function without type declarations; typed here once.
const porter2 = createRequire(import.meta.url)('wink-porter2-stemmer') as (word: string) => string;

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;
/**
 * Vowel signs and viramas (Devanagari "हूँ", Thai, Tamil...) are combining marks, not letters: a
 * word runs on through them. Variation selectors (emoji presentation) are marks that end it.
 */
const COMBINING_MARK = /(?![\uFE00-\uFE0F])[\p{Mn}\p{Mc}]/u;
const WORD_WITH_MARKS =
  /[\p{L}\p{N}](?:(?![\uFE00-\uFE0F])[\p{L}\p{N}\p{Mn}\p{Mc}])*(?:['’](?:(?![\uFE00-\uFE0F])[\p{L}\p{Mn}\p{Mc}])+)?/gu;

/**
 * Text of ASCII characters only: NFKC leaves it as it is, it holds no combining mark, and its
 * letters and numbers (lower-cased) are a–z and 0–9, so ASCII_WORD cuts it as WORD would, about
 * five times faster (the search cuts every candidate's text: see TextTokens).
 */
const ASCII_ONLY = /^[^\u0080-\uffff]*$/;
const ASCII_WORD = /[a-z0-9]+(?:'[a-z]+)?/g;

/** Lower-cased NFKC words; apostrophe contractions stay one token ("don't"). */
export function words(text: string): string[] {
  if (ASCII_ONLY.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  const normal = text.normalize('NFKC').toLowerCase();
  return normal.match(COMBINING_MARK.test(normal) ? WORD_WITH_MARKS : WORD) ?? [];
}

/** English stop words (the default language's; see language.ts for the others). */
export const STOPWORDS: ReadonlySet<string> = new Set(english.stopwords);

/** Stems already computed: a memory's words repeat across writes, queries and reranks. */
const stems = new Map<string, string>();
const STEM_CACHE_SIZE = 50_000;

/**
 * The Porter2 (Snowball english) stem of a lower-cased word: the stemmer PostgreSQL's `english`
 * text search configuration uses, so the keyword index and the in-process scorers (coverage,
 * reranker, local embedder, dedupe) agree on which words meet ("moved"/"moving" → "move",
 * "cities" → "citi"). Words with digits stay as they are.
 */
export function stem(word: string): string {
  const known = stems.get(word);
  if (known !== undefined) return known;
  const stemmed = /\d/.test(word) ? word : porter2(word.replace(/’/g, "'"));
  if (stems.size >= STEM_CACHE_SIZE) stems.clear();
  stems.set(word, stemmed);
  return stemmed;
}

/** Shortest stem that also finds the longer words it begins. */
export const PREFIX_MIN = 5;

/**
 * Whether a query stem finds a word's stem: the same stem, or one begins the other and the
 * shorter has at least PREFIX_MIN letters. Stemming alone leaves word families apart
 * ("allergies" → "allergi", "allergic" → "allerg"; "music", "musician"); right truncation
 * joins them. The keyword index matches the same way (see keywordRecallQuery).
 */
export function stemsMeet(query: string, word: string): boolean {
  if (query === word) return true;
  // No pair array: this runs for every word of every text a search scores.
  return query.length < word.length
    ? query.length >= PREFIX_MIN && word.startsWith(query)
    : word.length >= PREFIX_MIN && query.startsWith(word);
}

/** Content-word stems: the words that carry meaning, normalised. */
export function contentStems(text: string): string[] {
  return words(text)
    .filter((word) => !STOPWORDS.has(word))
    .map(stem);
}

/**
 * A text's words (as {@link words} cuts them) and the stem of each, in the same order: what the
 * in-process scorers of a search (query-word coverage, the local reranker) read of a candidate.
 * Cutting a long text is the costly part, so a search cuts each candidate's text once and hands
 * the same tokens to every scorer.
 */
export interface TextTokens {
  readonly words: readonly string[];
  readonly stems: readonly string[];
}

export function tokensOf(text: string): TextTokens {
  const cut = words(text);
  return { words: cut, stems: cut.map(stem) };
}

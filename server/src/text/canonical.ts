import { createHash } from 'node:crypto';
import { words } from './tokens.js';

/** The text as dedupe sees it: NFKC, lower case, words only, single spaces. */
export function canonicalText(text: string): string {
  return words(text).join(' ');
}

/** SHA-256 of the canonical text: equal for texts that differ only in case, punctuation or spacing. */
export function canonicalHash(text: string): string {
  return createHash('sha256').update(canonicalText(text)).digest('hex');
}

/** The words and word pairs of a text, the units {@link lexicalSimilarity} compares. */
export function wordShingles(text: string): Set<string> {
  const tokens = words(text);
  const set = new Set<string>(tokens);
  for (let i = 0; i + 1 < tokens.length; i += 1) set.add(`${tokens[i]} ${tokens[i + 1]}`);
  return set;
}

/** Jaccard similarity of two {@link wordShingles} sets (0..1). */
export function shingleSimilarity(left: Set<string>, right: Set<string>): number {
  if (left.size === 0 && right.size === 0) return 1;
  let shared = 0;
  for (const item of left) if (right.has(item)) shared += 1;
  return shared / (left.size + right.size - shared);
}

/**
 * Jaccard similarity of the two texts' words and word pairs (0..1). Pairs keep order in play, so
 * "dog bites man" and "man bites dog" are not near duplicates.
 */
export function lexicalSimilarity(a: string, b: string): number {
  return shingleSimilarity(wordShingles(a), wordShingles(b));
}

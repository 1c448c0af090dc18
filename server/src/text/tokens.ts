/**
 * Shared text normalisation: the local embedder, dedupe and (later) extraction must agree on
 * what a word is.
 */

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** Lower-cased NFKC words; apostrophe contractions stay one token ("don't"). */
export function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

export const STOPWORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have having he her hers him his how i ' +
    'if in into is it its itself just me my myself no nor not of off on once only or our ours ourselves out over own same she ' +
    'should so some such than that the their theirs them themselves then there these they this those through to too under until ' +
    'up very was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    "i'm i've i'd i'll it's that's don't doesn't didn't isn't aren't wasn't weren't can't won't"
  ).split(' '),
);

/**
 * A small suffix stripper (a light Porter step 1): enough to make "moved"/"moving"/"moves" and
 * "cities"/"city" meet, cheap enough to run on every token.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word.replace(/['’]s$/, '');
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is'))
    w = w.slice(0, -1);
  if (w.endsWith('eed')) {
    if (w.length > 4) w = w.slice(0, -1);
  } else {
    for (const suffix of ['ing', 'ed']) {
      if (
        w.endsWith(suffix) &&
        w.length - suffix.length >= 3 &&
        /[aeiouy]/.test(w.slice(0, -suffix.length))
      ) {
        w = w.slice(0, -suffix.length);
        if (/(at|bl|iz)$/.test(w)) w += 'e';
        else if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
        // One short syllable ending consonant-vowel-consonant lost an e: lov(ed) → love, hik(ing) → hike.
        else if (/^[^aeiouy]*[aeiouy][^aeiouywxy]$/.test(w)) w += 'e';
        break;
      }
    }
  }
  if (w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);
  return w;
}

/** Content-word stems: the words that carry meaning, normalised. */
export function contentStems(text: string): string[] {
  return words(text)
    .filter((word) => !STOPWORDS.has(word))
    .map(stem);
}

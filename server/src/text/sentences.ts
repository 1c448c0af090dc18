/**
 * Sentence boundaries in plain text: what chunking packs into chunks and extraction reads one at
 * a time. Lengths and offsets are in UTF-16 code units (`string.length`).
 */

/** A trimmed sentence (or piece of one) as offsets into the text. */
export interface Unit {
  start: number;
  end: number;
  /** A blank line separates it from the previous unit. */
  paragraphStart: boolean;
}

// Lower-cased words that end with a period without ending the sentence. Words that are also
// common sentence endings ("no", "min") are left out: a missed split costs less than a wrong one.
// prettier-ignore
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'vs', 'etc', 'cf', 'al', 'approx',
  'inc', 'ltd', 'co', 'corp', 'dept', 'fig', 'figs', 'vol', 'vols', 'p', 'pp', 'ch', 'sec',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec',
  'gen', 'gov', 'sen', 'rep', 'capt', 'lt', 'col', 'sgt', 'hon', 'rev', 'ave', 'blvd', 'rd',
]);

/**
 * Candidate sentence ends: a newline; `.!?…` (plus closing quotes/brackets) followed by
 * whitespace; or CJK full-width terminators, which are not followed by spaces.
 */
const BOUNDARY = /\n|[.!?…]+[)\]}"'’”»]*(?=\s)|[。！？]+[)\]」』）"'’”]*/g;
const LOWERCASE = /\p{Ll}/u;
const SINGLE_LETTER = /^\p{Lu}$/u;
// "e.g", "i.e", "U.S", "a.m": the period we stand on closes a dotted abbreviation.
const DOTTED = /^(?:\p{L}\.)+\p{L}$/u;
const LIST_MARKER = /^(?:\d{1,3}|\p{L})$/u;
const CLOSING_PUNCTUATION = /[)\]}"'’”»]+$/;
const OPENING_PUNCTUATION = /^[([{"'‘“«]+/u;
const BLANK_LINE = /\n[^\S\n]*\n/;

/** Same set as the regex `\s`, without a regex call per character. */
export function isSpace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * Whether the terminator `text[termStart, termEnd)` (`.!?…` run plus closing quotes, already
 * known to be followed by whitespace) ends the sentence that began at `sentenceStart`.
 */
function endsSentence(
  text: string,
  termStart: number,
  termEnd: number,
  sentenceStart: number,
): boolean {
  let next = termEnd;
  while (next < text.length && isSpace(text.charCodeAt(next))) next += 1;
  if (next >= text.length) return true;
  const nextChar = text.codePointAt(next)!;
  if (LOWERCASE.test(String.fromCodePoint(nextChar))) return false;

  // Only a lone period can belong to an abbreviation; "?", "!", "…" and "..." always end.
  if (text.slice(termStart, termEnd).replace(CLOSING_PUNCTUATION, '') !== '.') return true;
  let wordStart = termStart;
  while (wordStart > sentenceStart && !isSpace(text.charCodeAt(wordStart - 1))) wordStart -= 1;
  const word = text.slice(wordStart, termStart).replace(OPENING_PUNCTUATION, '');
  if (word === '') return true;
  if (ABBREVIATIONS.has(word.toLowerCase())) return false;
  if (SINGLE_LETTER.test(word)) return false; // initials: "J. K. Rowling"
  if (DOTTED.test(word)) return false;
  // "1. Buy milk" / "a. First": a list marker at the start of a line, not a sentence.
  if (LIST_MARKER.test(word) && text.slice(sentenceStart, wordStart).trim() === '') return false;
  return true;
}

/** Trimmed sentence spans; `paragraphStart` marks those after a blank line. */
export function sentenceUnits(text: string): Unit[] {
  const units: Unit[] = [];
  let lastEnd = 0;
  const push = (from: number, to: number) => {
    while (from < to && isSpace(text.charCodeAt(from))) from += 1;
    while (to > from && isSpace(text.charCodeAt(to - 1))) to -= 1;
    if (from === to) return;
    const paragraphStart = units.length > 0 && BLANK_LINE.test(text.slice(lastEnd, from));
    units.push({ start: from, end: to, paragraphStart });
    lastEnd = to;
  };

  let sentenceStart = 0;
  BOUNDARY.lastIndex = 0;
  for (let match = BOUNDARY.exec(text); match !== null; match = BOUNDARY.exec(text)) {
    const matchEnd = match.index + match[0].length;
    const first = match[0].charCodeAt(0);
    if (first === 10 /* \n */) {
      push(sentenceStart, match.index);
      sentenceStart = matchEnd;
    } else if (first >= 0x3000 || endsSentence(text, match.index, matchEnd, sentenceStart)) {
      push(sentenceStart, matchEnd);
      sentenceStart = matchEnd;
    }
  }
  push(sentenceStart, text.length);
  return units;
}

/**
 * Splits text into trimmed sentences: after `.`, `!`, `?` or `…` followed by whitespace and a
 * character that is not lower case, after `。！？`, and at every line break. Abbreviations
 * ("e.g.", "Dr.", "etc."), decimals ("3.14"), initials ("J. K.") and list markers ("1.") do not
 * end a sentence.
 */
export function splitSentences(text: string): string[] {
  return sentenceUnits(text).map((unit) => text.slice(unit.start, unit.end));
}

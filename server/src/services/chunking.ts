/**
 * Splits memory text into the units that get embedded and searched. Chunks are contiguous,
 * trimmed slices of the input (original spacing and line breaks kept), built from whole sentences;
 * lengths are in UTF-16 code units (`string.length`).
 */

export type ChunkProfile = 'balanced' | 'dense' | 'document';

export interface ChunkingPreset {
  /** Packing stops before a sentence that would take the chunk past this length. */
  targetChars: number;
  /** Hard ceiling: no chunk is longer, overlap included. */
  maxChars: number;
  /** Budget for the whole sentences repeated from the end of the previous chunk. */
  overlapChars: number;
}

/**
 * - `balanced` (default): a conversational memory (a fact, a preference, a short exchange) is
 *   rarely over 1000 characters, so it stays one chunk and one vector; longer text splits into
 *   a few paragraph-sized pieces.
 * - `dense`: fact-dense text (notes, lists, specs) where one chunk should carry about one fact,
 *   so a query about one of them is not diluted by its neighbours in the same vector.
 * - `document`: long documents, where retrieval wants whole paragraphs of context; chunks
 *   prefer to end at paragraph boundaries (blank lines).
 *
 * Overlap is about a sentence or two, enough that a fact split across a boundary is still found
 * with its context, small enough not to duplicate much storage.
 */
export const CHUNK_PRESETS: Record<ChunkProfile, ChunkingPreset> = {
  balanced: { targetChars: 700, maxChars: 1000, overlapChars: 120 },
  dense: { targetChars: 350, maxChars: 500, overlapChars: 80 },
  document: { targetChars: 1400, maxChars: 2000, overlapChars: 200 },
};

/** A trimmed sentence (or piece of one) as offsets into the text. */
interface Unit {
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
function isSpace(code: number): boolean {
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
function sentenceUnits(text: string): Unit[] {
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

/** Breaks a unit longer than `maxChars` at word boundaries into pieces of at most `limit`. */
function splitLongUnit(
  text: string,
  unit: Unit,
  limit: number,
  maxChars: number,
  out: Unit[],
): void {
  let pos = unit.start;
  let paragraphStart = unit.paragraphStart;
  const emit = (end: number) => {
    let trimmedEnd = end;
    while (trimmedEnd > pos && isSpace(text.charCodeAt(trimmedEnd - 1))) trimmedEnd -= 1;
    out.push({ start: pos, end: trimmedEnd, paragraphStart });
    paragraphStart = false;
    pos = end;
    while (pos < unit.end && isSpace(text.charCodeAt(pos))) pos += 1;
  };

  while (unit.end - pos > limit) {
    // The last space that leaves a piece of at most `limit` characters.
    let cut = pos + limit;
    while (cut > pos && !isSpace(text.charCodeAt(cut))) cut -= 1;
    if (cut > pos) {
      emit(cut);
      continue;
    }
    // One word fills the window: keep it whole when it fits a chunk, else cut it.
    const wordLimit = Math.min(unit.end, pos + maxChars + 1);
    let wordEnd = pos + limit;
    while (wordEnd < wordLimit && !isSpace(text.charCodeAt(wordEnd))) wordEnd += 1;
    if (wordEnd - pos <= maxChars) {
      emit(wordEnd);
      continue;
    }
    cut = pos + limit;
    const code = text.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // never split a surrogate pair
    emit(cut);
  }
  if (pos < unit.end) emit(unit.end);
}

/**
 * Splits text into chunks for embedding: whole sentences packed up to the profile's target
 * length, each chunk after the first opening with the last sentences of the previous one.
 * Text that fits in one chunk (after trimming) is returned as is; blank text gives `[]`.
 *
 * Guarantees: deterministic; every chunk is trimmed, non-empty and at most `maxChars` long;
 * dropping the overlaps, the chunks cover every non-blank character of the input in order.
 *
 * @example chunkText(longArticle, 'document') // ≈1400-character chunks, 200 of overlap
 */
export function chunkText(text: string, profile: ChunkProfile = 'balanced'): string[] {
  const preset = CHUNK_PRESETS[profile];
  if (!preset) throw new TypeError(`unknown chunk profile: ${String(profile)}`);
  const { targetChars: target, maxChars: max, overlapChars } = preset;
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.length <= max) return [trimmed];

  const units: Unit[] = [];
  for (const unit of sentenceUnits(text)) {
    // Pieces of an over-long sentence are target-sized so they pack like ordinary sentences.
    if (unit.end - unit.start > max) splitLongUnit(text, unit, target, max, units);
    else units.push(unit);
  }
  const preferParagraphs = profile === 'document';
  const textEnd = units[units.length - 1]!.end;

  const chunks: string[] = [];
  let first = 0; // first unit of the chunk, overlap included
  let next = 0; // first unit not yet in any chunk
  while (next < units.length) {
    const newStart = units[next]!;
    // The overlap gives way first when it would push the chunk past the ceiling.
    while (first < next && newStart.end - units[first]!.start > max) first += 1;
    const start = units[first]!.start;
    let end = newStart.end;
    let last = next;
    while (last + 1 < units.length) {
      const candidate = units[last + 1]!;
      const length = end - start;
      const grown = candidate.end - start;
      if (grown > max) break;
      if (preferParagraphs && candidate.paragraphStart && length >= target / 2) break;
      // Past the target only to avoid a small chunk here or a small tail at the end.
      if (grown > target && length >= target / 2 && textEnd - start > max) break;
      last += 1;
      end = candidate.end;
    }
    chunks.push(text.slice(start, end));

    // Overlap: the last whole sentences of this chunk that fit the budget.
    let overlapFirst = last + 1;
    while (overlapFirst > first && end - units[overlapFirst - 1]!.start <= overlapChars) {
      overlapFirst -= 1;
    }
    first = overlapFirst;
    next = last + 1;
  }
  return chunks;
}

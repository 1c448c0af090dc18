/**
 * Splits memory text into the units that get embedded and searched. Chunks are contiguous,
 * trimmed slices of the input (original spacing and line breaks kept), built from whole sentences;
 * lengths are in UTF-16 code units (`string.length`).
 */

import { isSpace, sentenceUnits, type Unit } from '../text/sentences.js';
import { InvariantError } from '../errors.js';

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
  if (!preset) throw new InvariantError(`unknown chunk profile: ${String(profile)}`);
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

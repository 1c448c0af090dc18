/**
 * How a document is cut into sections, shared by the server (which numbers the sections it
 * stores) and the CLI (which sends a large document in several requests, whole sections each):
 * both cut the same way, so the section numbers of a document sent in parts match those of the
 * same document sent at once.
 */

/** A section longer than this (characters) continues in the next one, cut at a paragraph. */
export const MAX_SECTION_CHARS = 20_000;

export interface DocumentSection {
  /** The heading's text without the `#` marks; '' before the first heading. */
  title: string;
  /** The section as written, heading line included, trimmed. */
  text: string;
  /** A later part of a section cut for size: it does not start with its heading. */
  continued: boolean;
}

// An ATX Markdown heading: one to six `#`, a space, the title.
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$/;

/**
 * Cuts a document at its Markdown headings (`#` … `######`). Text before the first heading is a
 * section titled ''. A section over {@link MAX_SECTION_CHARS} is cut at blank lines (then at
 * line ends, then at spaces) into consecutive sections with the same title. Blank sections are
 * dropped. Deterministic; the sections cover every non-blank character in order.
 */
export function splitDocumentSections(text: string): DocumentSection[] {
  const sections: DocumentSection[] = [];
  let title = '';
  let lines: string[] = [];
  let fenced = false;
  const flush = () => {
    const body = lines.join('\n').trim();
    if (body !== '') {
      cutToSize(body, MAX_SECTION_CHARS).forEach((part, index) =>
        sections.push({ title, text: part, continued: index > 0 }),
      );
    }
    lines = [];
  };
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    // A `#` inside a fenced code block is code (a shell comment), not a heading.
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : HEADING.exec(line);
    if (heading) {
      flush();
      title = heading[2]!.trim();
    }
    lines.push(line);
  }
  flush();
  return sections;
}

/**
 * Cuts `text` into trimmed pieces of at most `max` characters, preferring the last blank line
 * before the limit, then the last line end, then the last space; a word longer than `max` is cut.
 */
export function cutToSize(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    let cut = lastBreak(window, /\n[ \t]*\n/g);
    if (cut <= 0) cut = lastBreak(window, /\n/g);
    if (cut <= 0) cut = lastBreak(window, /\s/g);
    if (cut <= 0) {
      cut = max;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // never split a surrogate pair
    }
    const piece = rest.slice(0, cut).trim();
    if (piece !== '') pieces.push(piece);
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') pieces.push(rest);
  return pieces;
}

/** Where the last match of `pattern` in `window` starts (a break there keeps the piece ≤ max). */
function lastBreak(window: string, pattern: RegExp): number {
  let at = -1;
  for (const match of window.matchAll(pattern)) at = match.index;
  return at;
}

/**
 * Packs a section's paragraphs (blank-line separated) into pieces of at most `max` characters;
 * a paragraph longer than `max` is cut by {@link cutToSize}.
 */
export function splitSectionPieces(text: string, max: number): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const paragraph of text.split(/\n[ \t]*\n/)) {
    const trimmed = paragraph.trim();
    if (trimmed === '') continue;
    const joined = current === '' ? trimmed : `${current}\n\n${trimmed}`;
    if (joined.length <= max) {
      current = joined;
      continue;
    }
    if (current !== '') pieces.push(current);
    if (trimmed.length <= max) {
      current = trimmed;
    } else {
      const cut = cutToSize(trimmed, max);
      current = cut.pop() ?? '';
      pieces.push(...cut);
    }
  }
  if (current !== '') pieces.push(current);
  return pieces;
}

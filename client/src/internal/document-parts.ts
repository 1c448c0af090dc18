import { INGEST_LIMITS, splitDocumentSections, splitSectionPieces } from '@mnemo/contract';

/** One request's share of a document sent in parts. */
export interface DocumentPart {
  text: string;
  /** The number of the part's first section in the whole document. */
  section_offset: number;
  /** Set when the part opens with the later part of a section cut for size. */
  section_title?: string;
  /** Sections in this part. */
  sections: number;
}

/**
 * Cuts a document into parts of whole sections, each at most `partChars` long and making at most
 * the server's pieces per request (counted with the server's own cut at `maxPieceChars`); a
 * section is at most 20 000 characters, so a part over the limit holds one section. The server
 * cuts a part into the same sections as the whole document, so section numbers line up: a part
 * that opens with the rest of a cut section names that section's title.
 */
export function documentParts(
  text: string,
  partChars: number,
  maxPieceChars: number = INGEST_LIMITS.pieceChars.default,
): DocumentPart[] {
  const sections = splitDocumentSections(text);
  const pieces = sections.map((section) => splitSectionPieces(section.text, maxPieceChars).length);
  const total = pieces.reduce((sum, n) => sum + n, 0);
  if (text.length <= partChars && total <= INGEST_LIMITS.items.max) {
    return [{ text, section_offset: 0, sections: sections.length }];
  }
  const parts: DocumentPart[] = [];
  let current: (DocumentPart & { pieces: number }) | undefined;
  const flush = () => {
    if (!current) return;
    const { pieces: _pieces, ...part } = current;
    parts.push(part);
    current = undefined;
  };
  sections.forEach((section, index) => {
    const count = pieces[index]!;
    // A continued section must open its part: after its first part in the same text the server
    // would join them again.
    if (
      current &&
      (section.continued ||
        current.text.length + 2 + section.text.length > partChars ||
        current.pieces + count > INGEST_LIMITS.items.max)
    ) {
      flush();
    }
    if (!current) {
      current = {
        text: section.text,
        section_offset: index,
        ...(section.continued && section.title !== '' ? { section_title: section.title } : {}),
        sections: 1,
        pieces: count,
      };
      return;
    }
    current.text = `${current.text}\n\n${section.text}`;
    current.sections += 1;
    current.pieces += count;
  });
  flush();
  return parts;
}

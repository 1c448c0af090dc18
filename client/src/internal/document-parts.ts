import { splitDocumentSections } from '@mnemo/contract';

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
 * Cuts a document into parts of whole sections, each at most `partChars` long (a section is
 * at most 20 000 characters, so a part over the limit holds one section). The server cuts a
 * part into the same sections as the whole document, so section numbers line up: a part that
 * opens with the rest of a cut section names that section's title.
 */
export function documentParts(text: string, partChars: number): DocumentPart[] {
  if (text.length <= partChars) {
    return [{ text, section_offset: 0, sections: splitDocumentSections(text).length }];
  }
  const parts: DocumentPart[] = [];
  let current: DocumentPart | undefined;
  splitDocumentSections(text).forEach((section, index) => {
    // A continued section must open its part: after its first part in the same text the server
    // would join them again.
    if (
      current &&
      (section.continued || current.text.length + 2 + section.text.length > partChars)
    ) {
      parts.push(current);
      current = undefined;
    }
    if (!current) {
      current = {
        text: section.text,
        section_offset: index,
        ...(section.continued && section.title !== '' ? { section_title: section.title } : {}),
        sections: 1,
      };
      return;
    }
    current.text = `${current.text}\n\n${section.text}`;
    current.sections += 1;
  });
  if (current) parts.push(current);
  return parts;
}

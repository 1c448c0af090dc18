/** One atomic memory found in a longer text. */
export interface ExtractedMemory {
  /** A self-contained statement: readable without its parent (pronouns resolved where possible). */
  text: string;
  memoryType: 'fact' | 'preference' | 'event' | 'task';
}

/**
 * Splits a memory into atomic child memories (facts, preferences, events, tasks). Returns at
 * most `maxItems`; an empty list means there was nothing worth splitting out.
 */
export interface Extractor {
  /** Short name, e.g. `local`, `openai`. */
  readonly name: string;
  extract(text: string, options: { maxItems: number }): Promise<ExtractedMemory[]>;
}

/** The extractor failed (timeout, HTTP error, unusable answer): the parent is stored anyway. */
export class ExtractionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ExtractionError';
  }
}

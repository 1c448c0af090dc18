import type { TextTokens } from '../../text/tokens.js';

/** What a caller may hand a reranker besides the texts. */
export interface RerankOptions {
  /**
   * The tokens of document `index` (`tokensOf` of its text), for a reranker that reads words:
   * the search cuts each candidate's text once for every scorer that reads it, rather than have
   * each cut it again. A reranker that sends the texts away ignores it.
   */
  tokensOf?: (index: number) => TextTokens;
}

/**
 * Re-scores search candidates against the query after fusion. Scores are in 0..1, higher is more
 * relevant; the caller blends them with its own relevance, so a reranker can only reorder what
 * recall found.
 */
export interface Reranker {
  /** Short name, e.g. `local`, `http`. */
  readonly name: string;
  /** One score in 0..1 per document, in input order. */
  rerank(query: string, documents: string[], options?: RerankOptions): Promise<number[]>;
}

/** The reranker failed; search goes on without it (degraded, not failed). */
export class RerankError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RerankError';
  }
}

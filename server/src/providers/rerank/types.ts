/**
 * Re-scores search candidates against the query after fusion. Scores are in 0..1, higher is more
 * relevant; the caller blends them with its own relevance, so a reranker can only reorder what
 * recall found.
 */
export interface Reranker {
  /** Short name, e.g. `local`, `http`. */
  readonly name: string;
  /** One score in 0..1 per document, in input order. */
  rerank(query: string, documents: string[]): Promise<number[]>;
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

/**
 * Turns text into vectors. Memories and queries of one deployment must be embedded by the same
 * provider: each chunk records `provider`, `dimension` and `version`, and vector search compares
 * only chunks whose dimension equals the query's.
 */
export interface EmbeddingProvider {
  /** Short provider name stored on each chunk, e.g. `local` or `openai`. */
  readonly provider: string;
  /** Model name, reported by `/v1/health` as `provider/model`. */
  readonly model: string;
  /** Changes whenever the same text would embed differently (model, dimension, algorithm). */
  readonly version: string;
  readonly dimension: number;
  /**
   * How much vector recall counts beside keyword recall in hybrid search (0..1; default 1). An
   * embedder that only sees word overlap, like the local one, finds what BM25 finds, less
   * precisely: at full weight its ranks push BM25's better matches down.
   */
  readonly fusionWeight?: number;
  /**
   * Embeds in this process: no network, no per-call cost, quicker than a database round trip
   * (default false). The write path then embeds before its first lookup, so that lookup can
   * also fetch the nearest memories, even for a write that turns out to be a replay or a
   * duplicate; a remote provider is called only once a write is known to need vectors.
   */
  readonly inProcess?: boolean;
  /**
   * Embeds each text; the result has one unit-length vector per input, in order. `purpose` lets
   * asymmetric models treat queries and documents differently.
   */
  embed(texts: string[], purpose: EmbeddingPurpose): Promise<number[][]>;
}

export type EmbeddingPurpose = 'document' | 'query';

/** The provider failed (network, HTTP error after retries, malformed answer). */
export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EmbeddingError';
  }
}

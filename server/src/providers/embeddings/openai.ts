import { isRecord, JsonEndpoint, type HttpRetryOptions } from '../http-retry.js';
import { EmbeddingError } from './types.js';
import type { EmbeddingProvider, EmbeddingPurpose } from './types.js';
import { SetupError } from '../../errors.js';

/** Options of {@link OpenAIEmbeddingProvider}; every optional field says its default. */
export interface OpenAIEmbeddingOptions extends HttpRetryOptions {
  /**
   * API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. Requests go to
   * `<baseUrl>/embeddings`; a query string on the base (Azure's `?api-version=`) is kept.
   */
  baseUrl: string;
  /** Model (or Azure deployment) name, e.g. `text-embedding-3-small`. */
  model: string;
  /** Expected vector length; every answer is checked against it. */
  dimension: number;
  /**
   * Send `dimensions` in the body so the model shortens its vectors (OpenAI text-embedding-3
   * only; many compatible servers reject the field). Default `false`.
   */
  sendDimensions?: boolean;
  /** Inputs per HTTP request. Default 64. */
  batchSize?: number;
  /**
   * Retries after the first attempt, on 429, 500, 502, 503, 504, network errors and timeouts.
   * Default 3.
   */
  maxRetries?: number;
  /** Per-attempt timeout covering the whole response, body included. Default 30000. */
  timeoutMs?: number;
}

/**
 * Embeds through any OpenAI-compatible `/embeddings` endpoint: OpenAI, Azure OpenAI, Ollama's
 * `/v1`, vLLM, TEI's OpenAI route. Batches run one after another (kind to rate limits), answers
 * are validated and L2-normalised because not every server normalises.
 */
export class OpenAIEmbeddingProvider implements EmbeddingProvider {
  readonly provider = 'openai';
  readonly model: string;
  readonly dimension: number;
  readonly version: string;
  /** Every call is an HTTP request, possibly billed: made only for writes that need vectors. */
  readonly inProcess = false;

  private readonly endpoint: JsonEndpoint;
  private readonly sendDimensions: boolean;
  private readonly batchSize: number;

  constructor(options: OpenAIEmbeddingOptions) {
    if (!Number.isInteger(options.dimension) || options.dimension < 1) {
      throw new SetupError(`dimension must be a positive integer, got ${options.dimension}`);
    }
    const batchSize = options.batchSize ?? 64;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new SetupError(`batchSize must be a positive integer, got ${batchSize}`);
    }
    this.model = options.model;
    this.dimension = options.dimension;
    this.version = `openai:${options.model}:${options.dimension}`;
    this.endpoint = new JsonEndpoint({
      ...options,
      path: 'embeddings',
      label: 'openai embeddings',
      errorClass: EmbeddingError,
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 30_000,
    });
    this.sendDimensions = options.sendDimensions ?? false;
    this.batchSize = batchSize;
  }

  // OpenAI embedding models are symmetric: queries and documents embed the same way.
  async embed(texts: string[], _purpose: EmbeddingPurpose): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const batch = texts.slice(start, start + this.batchSize);
      vectors.push(...(await this.embedBatch(batch)));
    }
    return vectors;
  }

  private async embedBatch(input: string[]): Promise<number[][]> {
    const body = JSON.stringify({
      model: this.model,
      input,
      encoding_format: 'float',
      ...(this.sendDimensions ? { dimensions: this.dimension } : {}),
    });
    const answer = await this.endpoint.post(body);
    return this.readVectors(this.endpoint.read(answer), input.length);
  }

  private readVectors(payload: unknown, expected: number): number[][] {
    const data = isRecord(payload) ? payload.data : undefined;
    if (!Array.isArray(data)) {
      throw new EmbeddingError('openai embeddings answer has no `data` array');
    }
    if (data.length !== expected) {
      throw new EmbeddingError(`openai returned ${data.length} embeddings for ${expected} inputs`);
    }
    const vectors = new Array<number[] | undefined>(expected).fill(undefined);
    data.forEach((item: unknown, position) => {
      const record = isRecord(item) ? item : {};
      // Servers may answer out of order; `index` says which input each vector belongs to.
      const index = record.index ?? position;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
        throw new EmbeddingError(
          `openai returned an embedding with invalid index ${String(index)}`,
        );
      }
      if (vectors[index] !== undefined) {
        throw new EmbeddingError(`openai returned two embeddings for index ${index}`);
      }
      vectors[index] = this.readVector(record.embedding, index);
    });
    return vectors as number[][];
  }

  private readVector(embedding: unknown, index: number): number[] {
    if (!Array.isArray(embedding)) {
      throw new EmbeddingError(`openai returned a non-array embedding at index ${index}`);
    }
    if (embedding.length !== this.dimension) {
      throw new EmbeddingError(
        `openai returned vectors of dimension ${embedding.length}, expected ${this.dimension}: ` +
          'set MNEMO_EMBEDDINGS_DIMENSIONS',
      );
    }
    let norm = 0;
    for (const value of embedding) {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new EmbeddingError(
          `openai returned a non-finite value in the embedding at index ${index}`,
        );
      }
      norm += value * value;
    }
    norm = Math.sqrt(norm);
    // A zero vector has no direction, so no cosine: storing it would poison search.
    if (norm === 0) throw new EmbeddingError(`openai returned a zero vector at index ${index}`);
    return (embedding as number[]).map((value) => value / norm);
  }
}

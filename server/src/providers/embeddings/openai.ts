import { EmbeddingError } from './types.js';
import type { EmbeddingProvider, EmbeddingPurpose } from './types.js';

/** Options of {@link OpenAIEmbeddingProvider}; every optional field says its default. */
export interface OpenAIEmbeddingOptions {
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
  /** Sent as `Authorization: Bearer <key>`; never appears in errors. Default: no header. */
  apiKey?: string;
  /** Extra headers, e.g. `{ 'api-key': '...' }` for Azure. Their values never appear in errors. */
  headers?: Record<string, string>;
  /** Inputs per HTTP request. Default 64. */
  batchSize?: number;
  /**
   * Retries after the first attempt, on 429, 500, 502, 503, 504, network errors and timeouts.
   * Default 3.
   */
  maxRetries?: number;
  /**
   * Backoff base: retry n (from 0) waits `random(0, base * 2^n)` ms, capped at 8 s; a
   * `Retry-After` header (seconds or HTTP date) wins when present, capped at 30 s. Default 250.
   */
  retryBaseMs?: number;
  /** Per-attempt timeout covering the whole response, body included. Default 30000. */
  timeoutMs?: number;
  /** Default: the global `fetch`, looked up at call time. */
  fetch?: typeof fetch;
  /** Default: a `setTimeout` promise. */
  sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1). Default `Math.random`. */
  random?: () => number;
}

const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);
const MAX_BACKOFF_MS = 8_000;
const MAX_RETRY_AFTER_MS = 30_000;
const ERROR_EXCERPT_CHARS = 200;

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

  private readonly url: string;
  /** Without query string or user info, which may carry a key on some gateways. */
  private readonly displayUrl: string;
  private readonly sendDimensions: boolean;
  private readonly headers: Headers;
  private readonly secrets: string[];
  private readonly batchSize: number;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(options: OpenAIEmbeddingOptions) {
    if (!Number.isInteger(options.dimension) || options.dimension < 1) {
      throw new TypeError(`dimension must be a positive integer, got ${options.dimension}`);
    }
    const batchSize = options.batchSize ?? 64;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new TypeError(`batchSize must be a positive integer, got ${batchSize}`);
    }
    this.model = options.model;
    this.dimension = options.dimension;
    this.version = `openai:${options.model}:${options.dimension}`;
    const url = embeddingsUrl(options.baseUrl);
    this.url = url.toString();
    this.displayUrl = `${url.origin}${url.pathname}`;
    this.sendDimensions = options.sendDimensions ?? false;
    // A Headers object, so a caller's `Content-Type` replaces ours instead of doubling it.
    this.headers = new Headers({ 'content-type': 'application/json', accept: 'application/json' });
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      this.headers.set(name, value);
    }
    if (options.apiKey) this.headers.set('authorization', `Bearer ${options.apiKey}`);
    // Servers sometimes echo the credential they rejected; keep it out of our messages.
    this.secrets = [options.apiKey, ...Object.values(options.headers ?? {})].filter(
      (value): value is string => typeof value === 'string' && value.length >= 8,
    );
    this.batchSize = batchSize;
    this.maxRetries = Math.max(0, options.maxRetries ?? 3);
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
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
    const text = await this.post(body);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new EmbeddingError(
        `openai embeddings answered with invalid JSON: ${this.excerpt(text)}`,
        undefined,
        { cause: error },
      );
    }
    return this.readVectors(parsed, input.length);
  }

  /** POSTs with retries; resolves with the body of a 2xx answer. */
  private async post(body: string): Promise<string> {
    for (let attempt = 0; ; attempt += 1) {
      const canRetry = attempt < this.maxRetries;
      const outcome = await this.attempt(body);
      if (outcome.kind === 'ok') return outcome.text;

      if (outcome.kind === 'failed') {
        if (canRetry) {
          await this.sleep(this.backoff(attempt));
          continue;
        }
        throw new EmbeddingError(
          `openai embeddings request to ${this.displayUrl} failed after ${attempt + 1} ` +
            `attempt(s): ${outcome.reason}`,
          undefined,
          { cause: outcome.cause },
        );
      }

      const { response, text } = outcome;
      if (RETRYABLE_STATUSES.has(response.status) && canRetry) {
        await this.sleep(
          retryAfterMs(response.headers.get('retry-after')) ?? this.backoff(attempt),
        );
        continue;
      }
      const tries = attempt + 1;
      throw new EmbeddingError(
        `openai embeddings returned HTTP ${response.status}` +
          (tries > 1 ? ` after ${tries} attempts` : '') +
          `: ${this.excerpt(errorMessage(text))}`,
        response.status,
      );
    }
  }

  private async attempt(body: string): Promise<AttemptOutcome> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      const response = await this.fetchImpl(this.url, {
        method: 'POST',
        headers: this.headers,
        body,
        signal: controller.signal,
      });
      // Reading the body stays under the timeout: a server can stall after the headers.
      const text = await response.text();
      return response.ok ? { kind: 'ok', text } : { kind: 'http', response, text };
    } catch (error) {
      const reason = timedOut
        ? `timed out after ${this.timeoutMs} ms`
        : `network error: ${this.excerpt(describe(error))}`;
      return { kind: 'failed', reason, cause: error };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Full jitter: uniform in [0, min(base * 2^attempt, 8 s)). */
  private backoff(attempt: number): number {
    return this.random() * Math.min(this.retryBaseMs * 2 ** attempt, MAX_BACKOFF_MS);
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

  /** One line, bounded, with any configured credential masked. */
  private excerpt(text: string): string {
    let clean = text.replace(/\s+/g, ' ').trim();
    for (const secret of this.secrets) clean = clean.split(secret).join('***');
    if (clean.length > ERROR_EXCERPT_CHARS) clean = `${clean.slice(0, ERROR_EXCERPT_CHARS)}…`;
    return clean || '(empty body)';
  }
}

type AttemptOutcome =
  | { kind: 'ok'; text: string }
  | { kind: 'http'; response: Response; text: string }
  | { kind: 'failed'; reason: string; cause: unknown };

function embeddingsUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl is not a valid URL: ${baseUrl}`);
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/embeddings`;
  return url;
}

/**
 * A Retry-After header (delta-seconds or HTTP date) as milliseconds, capped at 30 s; undefined
 * when absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(value)) {
    ms = Number(value) * 1000;
  } else {
    const date = Date.parse(value);
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * The human part of an error body: OpenAI's `{error:{message}}`, TEI's `{error}`, vLLM's
 * `{message}`, FastAPI's `{detail}`; otherwise the raw text.
 */
function errorMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (isRecord(body)) {
      const { error } = body;
      if (isRecord(error) && typeof error.message === 'string') return error.message;
      if (typeof error === 'string') return error;
      if (typeof body.message === 'string') return body.message;
      if (typeof body.detail === 'string') return body.detail;
    }
  } catch {
    // Not JSON: the text itself is the best we have.
  }
  return text;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // undici hides the socket error (ECONNREFUSED, ...) in `cause`.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

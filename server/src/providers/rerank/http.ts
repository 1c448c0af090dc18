import { retryAfterMs } from '../embeddings/openai.js';
import { RerankError } from './types.js';
import type { Reranker } from './types.js';

/** Options of {@link HttpReranker}; every optional field says its default. */
export interface HttpRerankerOptions {
  /**
   * API root, e.g. `https://api.cohere.com/v2`, `https://api.jina.ai/v1`, `http://vllm:8000/v1`
   * or `http://tei:8080`. Requests go to `<baseUrl>/rerank`; a query string on the base (Azure's
   * `?api-version=`) is kept.
   */
  baseUrl: string;
  /** Sent as `model` when set, e.g. `rerank-v3.5`. Default: not sent (TEI, single-model vLLM). */
  model?: string;
  /** Sent as `Authorization: Bearer <key>`; never appears in errors. Default: no header. */
  apiKey?: string;
  /** Extra headers. Their values never appear in errors. */
  headers?: Record<string, string>;
  /**
   * Retries after the first attempt, on 429, 500, 502, 503, 504, network errors and timeouts.
   * Default 2: reranking sits on the search path, and search goes on without it.
   */
  maxRetries?: number;
  /**
   * Backoff base: retry n (from 0) waits `random(0, base * 2^n)` ms, capped at 8 s; a
   * `Retry-After` header (seconds or HTTP date) wins when present, capped at 30 s. Default 250.
   */
  retryBaseMs?: number;
  /** Per-attempt timeout covering the whole response, body included. Default 10000. */
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
const ERROR_EXCERPT_CHARS = 200;

/**
 * TEI's `/rerank` wants `texts` where everyone else says `documents`, and says so in its 422
 * ("missing field `texts`"). That answer switches the reranker to TEI's body for good.
 */
const TEI_MISSING_TEXTS = /missing field [`'"]?texts\b/;

/**
 * Reranks through a Cohere-style `/rerank` endpoint: Cohere, Jina, vLLM (`/rerank`,
 * `/v1/rerank`) and Hugging Face TEI. Answers may be `{ results: [{ index, relevance_score }] }`
 * (Cohere, Jina, vLLM) or `[{ index, score }]` (TEI), in any order; scores are mapped back to
 * input order and a document the server left out scores 0.
 *
 * Scores must come back in 0..1. Most servers send probabilities, but some cross-encoders
 * answer raw logits: when any score of an answer falls outside 0..1, the whole answer is read
 * as logits and squashed with the logistic function `1 / (1 + e^-x)`, which keeps its order.
 * (An answer of logits that all happen to lie in 0..1 cannot be told apart and is taken as is.)
 */
export class HttpReranker implements Reranker {
  readonly name = 'http';

  private readonly url: string;
  /** Without query string or user info, which may carry a key on some gateways. */
  private readonly displayUrl: string;
  private readonly model: string | undefined;
  private readonly headers: Headers;
  private readonly secrets: string[];
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private dialect: 'cohere' | 'tei' = 'cohere';

  constructor(options: HttpRerankerOptions) {
    const url = rerankUrl(options.baseUrl);
    this.url = url.toString();
    this.displayUrl = `${url.origin}${url.pathname}`;
    this.model = options.model || undefined;
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
    this.maxRetries = Math.max(0, options.maxRetries ?? 2);
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
  }

  async rerank(query: string, documents: string[]): Promise<number[]> {
    if (documents.length === 0) return [];
    let answer = await this.post(this.requestBody(query, documents));
    if (answer.kind === 'rejected' && this.dialect === 'cohere' && isTeiRejection(answer)) {
      this.dialect = 'tei';
      answer = await this.post(this.requestBody(query, documents));
    }
    if (answer.kind === 'rejected') {
      const { status, text, tries } = answer;
      throw new RerankError(
        `http rerank returned HTTP ${status}` +
          (tries > 1 ? ` after ${tries} attempts` : '') +
          `: ${this.excerpt(errorMessage(text))}`,
        status,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.text);
    } catch (error) {
      throw new RerankError(
        `http rerank answered with invalid JSON: ${this.excerpt(answer.text)}`,
        undefined,
        { cause: error },
      );
    }
    return readScores(parsed, documents.length);
  }

  private requestBody(query: string, documents: string[]): string {
    if (this.dialect === 'tei') {
      // TEI refuses inputs over the model's length unless told to truncate; Cohere-style
      // servers truncate by default.
      return JSON.stringify({ query, texts: documents, truncate: true, raw_scores: false });
    }
    return JSON.stringify({
      ...(this.model === undefined ? {} : { model: this.model }),
      query,
      documents,
      top_n: documents.length,
      return_documents: false,
    });
  }

  /**
   * POSTs with retries; resolves with the body of a 2xx answer or with the final non-2xx
   * answer. Throws only when no answer came (network error or timeout on the last attempt).
   */
  private async post(body: string): Promise<PostAnswer> {
    for (let attempt = 0; ; attempt += 1) {
      const canRetry = attempt < this.maxRetries;
      const outcome = await this.attempt(body);
      if (outcome.kind === 'ok') return outcome;

      if (outcome.kind === 'failed') {
        if (canRetry) {
          await this.sleep(this.backoff(attempt));
          continue;
        }
        throw new RerankError(
          `http rerank request to ${this.displayUrl} failed after ${attempt + 1} ` +
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
      return { kind: 'rejected', status: response.status, text, tries: attempt + 1 };
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

type PostAnswer =
  { kind: 'ok'; text: string } | { kind: 'rejected'; status: number; text: string; tries: number };

function isTeiRejection(answer: { status: number; text: string }): boolean {
  return (answer.status === 422 || answer.status === 400) && TEI_MISSING_TEXTS.test(answer.text);
}

function rerankUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl is not a valid URL: ${baseUrl}`);
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/rerank`;
  return url;
}

/** Scores in input order from a Cohere/Jina/vLLM `{ results }` or a TEI array answer. */
function readScores(payload: unknown, expected: number): number[] {
  const items = Array.isArray(payload) ? payload : isRecord(payload) ? payload.results : undefined;
  if (!Array.isArray(items)) {
    throw new RerankError('http rerank answer has neither a `results` array nor a top-level array');
  }
  const raw = new Array<number | undefined>(expected).fill(undefined);
  let logits = false;
  for (const item of items as unknown[]) {
    const record = isRecord(item) ? item : {};
    const { index } = record;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
      throw new RerankError(`http rerank returned a result with invalid index ${String(index)}`);
    }
    const score = record.relevance_score ?? record.score;
    if (typeof score !== 'number' || !Number.isFinite(score)) {
      throw new RerankError(`http rerank returned a non-finite score for index ${index}`);
    }
    if (raw[index] !== undefined) {
      throw new RerankError(`http rerank returned two scores for index ${index}`);
    }
    raw[index] = score;
    if (score < 0 || score > 1) logits = true;
  }
  return raw.map((score) => (score === undefined ? 0 : logits ? logistic(score) : score));
}

function logistic(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/**
 * The human part of an error body: Cohere's and vLLM's `{message}`, OpenAI-style
 * `{error:{message}}`, TEI's `{error}`, Jina's and FastAPI's `{detail}`; otherwise the raw text.
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

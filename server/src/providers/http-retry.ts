/**
 * The HTTP side the OpenAI-compatible providers share: one POST endpoint answering JSON, with
 * per-attempt timeouts, full-jitter retries, Retry-After, and error messages that never carry a
 * configured credential. Each provider keeps its request body, its answer parsing and its own
 * error class.
 */
import { SetupError } from '../errors.js';

/** Transport options every HTTP provider takes; every optional field says its default. */
export interface HttpRetryOptions {
  /** Sent as `Authorization: Bearer <key>`; never appears in errors. Default: no header. */
  apiKey?: string;
  /** Extra headers, e.g. `{ 'api-key': '...' }` for Azure. Their values never appear in errors. */
  headers?: Record<string, string>;
  /**
   * Retries after the first attempt, on 429, 500, 502, 503, 504, network errors and timeouts.
   * Default: set by each provider.
   */
  maxRetries?: number;
  /**
   * Backoff base: retry n (from 0) waits `random(0, base * 2^n)` ms, capped at 8 s; a
   * `Retry-After` header (seconds or HTTP date) wins when present, capped at 30 s. Default 250.
   */
  retryBaseMs?: number;
  /**
   * Per-attempt timeout covering the whole response, body included. Default: set by each
   * provider.
   */
  timeoutMs?: number;
  /** Default: the global `fetch`, looked up at call time. */
  fetch?: typeof fetch;
  /** Default: a `setTimeout` promise. */
  sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/** A provider's error class, e.g. `EmbeddingError`; `status` is set for HTTP answers only. */
export type ProviderErrorClass = new (
  message: string,
  status?: number,
  options?: { cause?: unknown },
) => Error;

/** Options of {@link JsonEndpoint}. */
export interface JsonEndpointOptions extends HttpRetryOptions {
  /** API root; a query string on it (Azure's `?api-version=`) is kept. */
  baseUrl: string;
  /** Appended to the path of `baseUrl`, e.g. `embeddings`. */
  path: string;
  /** Opens every error message, e.g. `openai embeddings`. */
  label: string;
  /** Class of every error thrown. */
  errorClass: ProviderErrorClass;
  maxRetries: number;
  timeoutMs: number;
}

/** A 2xx body, or the last non-2xx answer once retries are spent or the status is final. */
export type PostAnswer =
  { kind: 'ok'; text: string } | { kind: 'rejected'; status: number; text: string; tries: number };

const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);
const MAX_BACKOFF_MS = 8_000;
const MAX_RETRY_AFTER_MS = 30_000;
const ERROR_EXCERPT_CHARS = 200;
/** Shorter header values (`json`, `true`) are not secrets, and masking them would garble text. */
const MIN_SECRET_CHARS = 8;

/** One JSON endpoint POSTed to with retries. */
export class JsonEndpoint {
  private readonly url: string;
  /** Without query string or user info, which may carry a key on some gateways. */
  private readonly displayUrl: string;
  private readonly label: string;
  private readonly errorClass: ProviderErrorClass;
  private readonly headers: Headers;
  private readonly secrets: string[];
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(options: JsonEndpointOptions) {
    const url = endpointUrl(options.baseUrl, options.path);
    this.url = url.toString();
    this.displayUrl = `${url.origin}${url.pathname}`;
    this.label = options.label;
    this.errorClass = options.errorClass;
    // A Headers object, so a caller's `Content-Type` replaces ours instead of doubling it.
    this.headers = new Headers({ 'content-type': 'application/json', accept: 'application/json' });
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      this.headers.set(name, value);
    }
    if (options.apiKey) this.headers.set('authorization', `Bearer ${options.apiKey}`);
    // Servers sometimes echo the credential they rejected; keep it out of our messages.
    this.secrets = [options.apiKey, ...Object.values(options.headers ?? {})].filter(
      (value): value is string => typeof value === 'string' && value.length >= MIN_SECRET_CHARS,
    );
    this.maxRetries = Math.max(0, options.maxRetries);
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.timeoutMs = options.timeoutMs;
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
  }

  /**
   * POSTs with retries; resolves with the body of a 2xx answer or with the final non-2xx
   * answer. Throws only when no answer came (network error or timeout on the last attempt).
   */
  async post(body: string): Promise<PostAnswer> {
    for (let attempt = 0; ; attempt += 1) {
      const canRetry = attempt < this.maxRetries;
      const outcome = await this.attempt(body);
      if (outcome.kind === 'ok') return outcome;

      if (outcome.kind === 'failed') {
        if (canRetry) {
          await this.sleep(this.backoff(attempt));
          continue;
        }
        throw new this.errorClass(
          `${this.label} request to ${this.displayUrl} failed after ${attempt + 1} ` +
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

  /** The JSON of an `ok` answer; throws the provider's error for a rejected or unparsable one. */
  read(answer: PostAnswer): unknown {
    if (answer.kind === 'rejected') {
      const { status, text, tries } = answer;
      throw new this.errorClass(
        `${this.label} returned HTTP ${status}` +
          (tries > 1 ? ` after ${tries} attempts` : '') +
          `: ${this.excerpt(errorMessage(text))}`,
        status,
      );
    }
    try {
      return JSON.parse(answer.text) as unknown;
    } catch (error) {
      throw new this.errorClass(
        `${this.label} answered with invalid JSON: ${this.excerpt(answer.text)}`,
        undefined,
        { cause: error },
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

  private excerpt(text: string): string {
    return excerpt(text, this.secrets);
  }
}

type AttemptOutcome =
  | { kind: 'ok'; text: string }
  | { kind: 'http'; response: Response; text: string }
  | { kind: 'failed'; reason: string; cause: unknown };

function endpointUrl(baseUrl: string, path: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new SetupError(`baseUrl is not a valid URL: ${baseUrl}`);
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
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
 * The human part of an error body: OpenAI's `{error:{message}}`, TEI's `{error}`, Cohere's and
 * vLLM's `{message}`, Jina's and FastAPI's `{detail}`; otherwise the raw text.
 */
export function errorMessage(text: string): string {
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

/** One line, bounded to 200 characters, with every secret replaced by `***`. */
export function excerpt(text: string, secrets: readonly string[]): string {
  let clean = text.replace(/\s+/g, ' ').trim();
  for (const secret of secrets) clean = clean.split(secret).join('***');
  if (clean.length > ERROR_EXCERPT_CHARS) clean = `${clean.slice(0, ERROR_EXCERPT_CHARS)}…`;
  return clean || '(empty body)';
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // undici hides the socket error (ECONNREFUSED, ...) in `cause`.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

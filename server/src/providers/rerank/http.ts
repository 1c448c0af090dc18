import { isRecord, JsonEndpoint, type HttpRetryOptions } from '../http-retry.js';
import { RerankError } from './types.js';
import type { Reranker } from './types.js';

/** Options of {@link HttpReranker}; every optional field says its default. */
export interface HttpRerankerOptions extends HttpRetryOptions {
  /**
   * API root, e.g. `https://api.cohere.com/v2`, `https://api.jina.ai/v1`, `http://vllm:8000/v1`
   * or `http://tei:8080`. Requests go to `<baseUrl>/rerank`; a query string on the base (Azure's
   * `?api-version=`) is kept.
   */
  baseUrl: string;
  /** Sent as `model` when set, e.g. `rerank-v3.5`. Default: not sent (TEI, single-model vLLM). */
  model?: string;
  /**
   * Retries after the first attempt, on 429, 500, 502, 503, 504, network errors and timeouts.
   * Default 2: reranking sits on the search path, and search goes on without it.
   */
  maxRetries?: number;
  /** Per-attempt timeout covering the whole response, body included. Default 10000. */
  timeoutMs?: number;
}

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

  private readonly endpoint: JsonEndpoint;
  private readonly model: string | undefined;
  private dialect: 'cohere' | 'tei' = 'cohere';

  constructor(options: HttpRerankerOptions) {
    this.endpoint = new JsonEndpoint({
      ...options,
      path: 'rerank',
      label: 'http rerank',
      errorClass: RerankError,
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeoutMs ?? 10_000,
    });
    this.model = options.model || undefined;
  }

  async rerank(query: string, documents: string[]): Promise<number[]> {
    if (documents.length === 0) return [];
    let answer = await this.endpoint.post(this.requestBody(query, documents));
    if (answer.kind === 'rejected' && this.dialect === 'cohere' && isTeiRejection(answer)) {
      this.dialect = 'tei';
      answer = await this.endpoint.post(this.requestBody(query, documents));
    }
    return readScores(this.endpoint.read(answer), documents.length);
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
}

function isTeiRejection(answer: { status: number; text: string }): boolean {
  return (answer.status === 422 || answer.status === 400) && TEI_MISSING_TEXTS.test(answer.text);
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

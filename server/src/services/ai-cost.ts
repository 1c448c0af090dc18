/**
 * What a request will cost in AI provider fees, estimated before the work runs so that the cost
 * burst and the global AI budget can refuse it up front. Amounts are micro-INR (millionths of a
 * rupee), so that cheap requests still count in whole units.
 */
export interface AiPrices {
  /** Micro-INR per embedded token (0 for the local embedder). */
  embedMicroInrPerToken: number;
  /** Micro-INR per generation token (0 for the local extractor or none). */
  genMicroInrPerToken: number;
}

/** Providers count about four characters a token in English; good enough for a budget. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/**
 * Extraction sends the text with its instructions and gets a list of facts back: the prompt
 * around the text, and an answer about as long as the text.
 */
const EXTRACTION_PROMPT_TOKENS = 400;

/** Generation tokens of one extraction call on `text` by a model (prompt and answer). */
export const estimateExtractionTokens = (text: string): number =>
  EXTRACTION_PROMPT_TOKENS + 2 * estimateTokens(text);

/** Tokens sent to the embedder for `texts` (a write's chunks): each is sent whole. */
export const estimateEmbedTokens = (texts: readonly string[]): number =>
  texts.reduce((sum, text) => sum + estimateTokens(text), 0);

const ceil = (value: number) => (value > 0 ? Math.ceil(value) : 0);

/**
 * Micro-INR of the AI work a plan reservation names (embedding and generation tokens): a write is
 * priced from the very amounts its quota reservation holds, so the two limits count one estimate.
 */
export function priceWork(
  work: { embedTokens?: number | undefined; genTokens?: number | undefined },
  prices: AiPrices,
): number {
  return ceil(
    (work.embedTokens ?? 0) * prices.embedMicroInrPerToken +
      (work.genTokens ?? 0) * prices.genMicroInrPerToken,
  );
}

/** A search or context call: the query embedded once. */
export function estimateQueryCost(query: string, prices: AiPrices): number {
  return ceil(estimateTokens(query) * prices.embedMicroInrPerToken);
}

import type { CostKind } from '@mnemo/contract';
import { estimateQueryCost, estimateWriteCost, type AiPrices } from '../services/ai-cost.js';
import { estimateIngestCost } from '../services/ingest/index.js';
import { estimateReplayCost } from '../services/retrieval/history.js';

/** What estimates are priced from: the providers' prices and whether extraction runs. */
export interface CostPricing {
  prices: AiPrices;
  extractionOn: boolean;
}

/** Micro-INR an operation's input is estimated to cost, before it runs. */
export type CostEstimator = (input: unknown, pricing: CostPricing) => number;

const fields = (input: unknown) =>
  input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The server's price for each cost kind the contract names. */
export const COST_ESTIMATORS: Record<CostKind, CostEstimator> = {
  write: (input, { prices, extractionOn }) => {
    const body = fields(input);
    return estimateWriteCost(text(body.text), extractionOn && body.extract !== false, prices);
  },
  // Keyword search embeds nothing.
  query: (input, { prices }) => {
    const body = fields(input);
    return body.search_mode === 'keyword' ? 0 : estimateQueryCost(text(body.query), prices);
  },
  ingest: (input, { prices, extractionOn }) =>
    estimateIngestCost(fields(input), 'ingest', extractionOn, prices),
  conversation: (input, { prices, extractionOn }) =>
    estimateIngestCost(fields(input), 'conversation', extractionOn, prices),
  // The saved query is read by the operation: priced as the longest query a search takes.
  replay: (_input, { prices }) => estimateReplayCost(prices),
};

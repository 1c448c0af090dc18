import type { CostKind } from '@mnemo/contract';
import type { MemoryInsertPayload } from '@mnemo/contract';
import type { Extractor } from '../providers/extraction/index.js';
import { estimateQueryCost, type AiPrices } from '../services/ai-cost.js';
import { estimateIngestCost } from '../services/ingest/index.js';
import { estimateWriteCost } from '../services/memory-write/budget.js';
import { estimateReplayCost } from '../services/retrieval/history.js';

/** What estimates are priced from: the providers' prices and the extractor a write would call. */
export interface CostPricing {
  prices: AiPrices;
  /** Undefined: extraction is off. */
  extractor: Extractor | undefined;
}

/** Micro-INR an operation's input is estimated to cost, before it runs. */
export type CostEstimator = (input: unknown, pricing: CostPricing) => number;

const fields = (input: unknown) =>
  input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The server's price for each cost kind the contract names. */
export const COST_ESTIMATORS: Record<CostKind, CostEstimator> = {
  // The price of what the write will reserve against the plan (memory-write/budget.ts).
  write: (input, { prices, extractor }) => {
    const body = fields(input) as Partial<MemoryInsertPayload>;
    return estimateWriteCost(extractor, { ...body, text: text(body.text) }, prices);
  },
  // Keyword search embeds nothing.
  query: (input, { prices }) => {
    const body = fields(input);
    return body.search_mode === 'keyword' ? 0 : estimateQueryCost(text(body.query), prices);
  },
  ingest: (input, { prices, extractor }) =>
    estimateIngestCost(fields(input), 'ingest', extractor, prices),
  conversation: (input, { prices, extractor }) =>
    estimateIngestCost(fields(input), 'conversation', extractor, prices),
  // The saved query is read by the operation: priced as the longest query a search takes.
  replay: (_input, { prices }) => estimateReplayCost(prices),
};

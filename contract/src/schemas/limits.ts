/**
 * The bounds of the published contract (the spec's "Limits" table), inclusive. The schemas are
 * built from them; the client, the CLI and the MCP tool descriptions quote them, so a bound
 * changes here and nowhere else.
 */
export const LIMITS = {
  /** Memory text, in characters. */
  memoryText: { min: 1, max: 50_000 },
  /** Ranking multiplier of a memory. */
  importance: { min: 0.01, max: 100 },
  /** Idempotency key of a write, in characters. */
  idempotencyKey: { min: 8, max: 128 },
  /** Search and context query, in characters. */
  query: { min: 1, max: 2000 },
  /** Results of a search or context call. */
  topK: { min: 1, max: 20 },
  /** Page size of search and context. */
  searchPageSize: { min: 1, max: 50 },
  /** Page size of the memory list. */
  listPageSize: { min: 1, max: 100 },
  /** Score floor of a search. */
  minScore: { min: 0, max: 1 },
  /** The request id a feedback names, in characters. */
  feedbackRequestId: { min: 1, max: 128 },
} as const;

export type Bounds = { readonly min: number; readonly max: number };

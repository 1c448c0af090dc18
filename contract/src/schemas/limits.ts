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
  /** Token budget of a context call's text (an extension of the spec). */
  contextTokens: { min: 50, max: 16_000 },
  /** Score floor of a search. */
  minScore: { min: 0, max: 1 },
  /** The request id a feedback names, in characters. */
  feedbackRequestId: { min: 1, max: 128 },
} as const;

/** The importance of a memory written without one: a neutral ranking multiplier. */
export const DEFAULT_IMPORTANCE = 1;

/**
 * Bounds this service adds to the spec's table, inclusive: identifiers and page numbers the spec
 * leaves open, bounded so that every accepted value fits the database (an index row, an integer
 * offset). Used by the schemas like {@link LIMITS}, and stated in the OpenAPI document.
 */
export const INPUT_BOUNDS = {
  /**
   * Owner id, in characters. Not in the spec's table: bounded so that an id always fits the
   * owner indexes (a btree row holds about 2.7 kB; 256 characters are at most 1 kB of UTF-8).
   */
  ownerId: { min: 1, max: 256 },
  /** `scope`, `namespace` and `containerTag`, in characters (indexed like the owner id). */
  label: { min: 0, max: 256 },
  /** A metadata key, in characters. */
  metadataKey: { min: 0, max: 256 },
  /**
   * A search's metadata filter: entries, and its size as JSON in UTF-8 bytes. Each entry is a
   * database parameter and a containment check per candidate, so an unbounded filter costs the
   * database's parameter limit (a 500) or seconds of the event loop.
   */
  filterMetadata: { maxKeys: 64, maxBytes: 16_384 },
  /**
   * A page number of search, context and the memory list. Bounded so that the offset
   * (page - 1) x page_size stays a small integer: at most 9 999 x 100 rows.
   */
  page: { min: 1, max: 10_000 },
  /** A memory id in a path, in characters (ids are UUIDs; longer is never one). */
  memoryId: { min: 1, max: 128 },
} as const;

/**
 * The instants a date field takes: what PostgreSQL's timestamp types and JavaScript's Date both
 * hold and print as a 4-digit ISO year. Checked on the instant in UTC, so an offset cannot carry
 * a date outside the window.
 */
export const DATE_WINDOW = {
  min: '0001-01-01T00:00:00.000Z',
  max: '9999-12-31T23:59:59.999Z',
} as const;

export type Bounds = { readonly min: number; readonly max: number };

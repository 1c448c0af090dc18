import type { UnsettledUsage } from './usage/blocks.js';

/**
 * The seam where plan quotas plug into the write and read pipelines: a route reserves what it
 * will consume before the costly work, commits after the work succeeded, releases on failure.
 * {@link unlimitedQuota} reserves everything (`MNEMO_LIMITS=off`); `createMeteredQuota`
 * (services/usage/index.ts) meters against the workspace's plan.
 */
export interface UsageAmounts {
  /** Memory writes (daily cap). */
  writes?: number;
  /** Searches and context calls (daily cap). */
  reads?: number;
  /** Texts embedded: chunks of a write, a search's query (daily cap). */
  embeds?: number;
  /** Tokens sent to the embedding provider (period cap). */
  embedTokens?: number;
  /** Extraction calls (daily cap). */
  extractionCalls?: number;
  /** Generation tokens of model calls, prompt and answer (period cap). */
  genTokens?: number;
  /** Bytes of memory text stored (cap on what is stored; never resets). */
  storageBytes?: number;
}

export interface UsageRequest extends UsageAmounts {
  workspaceId: string;
}

export interface UsageReservation {
  /**
   * The work succeeded: what was reserved counts as used. `actual` replaces the reserved amount
   * of each resource it names (the embed tokens the provider reported, say); resources that were
   * not reserved are not counted, so reserve an estimate (or 0) of anything to be committed.
   * Settling twice does nothing.
   */
  commit(actual?: UsageAmounts): Promise<void>;
  /** The work failed or was not needed: the reservation is refunded. */
  release(): Promise<void>;
}

export interface QuotaGate {
  /**
   * Throws a ServiceError when the request may not run: `CAP_EXCEEDED` (429, with Retry-After
   * when the window resets by itself; details name each resource over its cap),
   * `ENTITLEMENT_DEGRADED` (503) or `TRIAL_EXPIRED` (402, no plan in force).
   */
  reserve(request: UsageRequest): Promise<UsageReservation>;
  /** Consumption held in memory, not yet in the workspace's counters (block metering). */
  unsettled?(workspaceId: string): UnsettledUsage[];
  /** Writes what is held in memory to the counters (shutdown). */
  drain?(): Promise<void>;
}

export const nothingToSettle: UsageReservation = {
  commit: async () => {},
  release: async () => {},
};

export const unlimitedQuota: QuotaGate = {
  reserve: async () => nothingToSettle,
};

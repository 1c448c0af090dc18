/**
 * The seam where plan quotas plug into the write and read pipelines: a route reserves what it
 * will consume before the costly work, commits after the work succeeded, releases on failure.
 * Until plans are enforced, {@link unlimitedQuota} reserves everything.
 */
export interface UsageRequest {
  workspaceId: string;
  writes?: number;
  reads?: number;
  embeds?: number;
}

export interface UsageReservation {
  commit(): Promise<void>;
  release(): Promise<void>;
}

export interface QuotaGate {
  /** Throws a ServiceError (CAP_EXCEEDED, ENTITLEMENT_DEGRADED, ...) when the request may not run. */
  reserve(request: UsageRequest): Promise<UsageReservation>;
}

const nothingToSettle: UsageReservation = { commit: async () => {}, release: async () => {} };

export const unlimitedQuota: QuotaGate = {
  reserve: async () => nothingToSettle,
};

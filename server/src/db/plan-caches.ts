/** Owners whose size a process remembers; the least recently searched are forgotten first. */
const MAX_KNOWN_OWNERS = 50_000;

/** The generic plan's expectation of one owner's size, asked of PostgreSQL now and then. */
export interface GenericEstimate {
  fits: boolean;
  at: number;
  pending: Promise<void> | undefined;
}

/**
 * What the queries learn about one database while using it, for choosing plans: each owner's
 * chunk count as its last search read it, whether a generic plan expects a small owner, and
 * whether the sessions plan per execution. Made by `openDatabase` and owned by its handle, so
 * two handles (a writer and a replica, two test databases) never share what they learnt.
 */
export class PlanCaches {
  private readonly ownerChunkCounts = new Map<string, number>();
  readonly genericEstimate: GenericEstimate = { fits: false, at: 0, pending: undefined };
  plansPerExecution: Promise<boolean> | undefined;

  ownerChunks(owner: string): number | undefined {
    return this.ownerChunkCounts.get(owner);
  }

  noteOwnerChunks(owner: string, chunks: number): void {
    this.ownerChunkCounts.delete(owner);
    this.ownerChunkCounts.set(owner, chunks);
    if (this.ownerChunkCounts.size > MAX_KNOWN_OWNERS)
      this.ownerChunkCounts.delete(this.ownerChunkCounts.keys().next().value!);
  }
}

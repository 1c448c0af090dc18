import type { UsageResource } from '@mnemo/contract';
import { logBackgroundFailure } from '../../db/faults.js';
import type { CounterState, WindowKind } from '../../db/queries/usage.js';
import { ServiceError } from '../../errors.js';
import type { Logger } from '../../logger.js';

/** One resource of a reservation: `amount` in the window the plan puts it in. */
export interface MeteredItem {
  resource: UsageResource;
  windowKind: WindowKind;
  windowStart: string;
  amount: number;
  cap: number;
  /** When the window ends (a refusal's Retry-After); undefined: never (storage). */
  resetsAt: Date | undefined;
}

/** The database side of metering: one atomic reservation, one settlement (db/queries/usage.ts). */
export interface UsageLedger {
  /** Throws `CAP_EXCEEDED` when any item would go over its cap; returns the counters before. */
  reserve(
    workspaceId: string,
    items: MeteredItem[],
    plan: string,
  ): Promise<{ id: string; counters: CounterState[] }>;
  settle(
    id: string,
    outcome: 'committed' | 'released',
    actual?: Record<string, number>,
  ): Promise<void>;
}

/** What one request holds: settled once, by commit (with actual amounts by resource) or release. */
export interface Holding {
  commit(actual?: Partial<Record<UsageResource, number>>): Promise<void>;
  release(): Promise<void>;
}

export interface BlockMeteringOptions {
  /** Requests like the current one a block reserves at once; below 2, every request is exact. */
  requestsPerBlock: number;
  /** A block is settled at most this long after it opened: how far the counters lag behind. */
  maxAgeMs: number;
}

/** A block takes at most this share of a counter's remaining headroom, so that several instances
 * drawing blocks near a cap leave each other room and fall back to exact reservations in time. */
const HEADROOM_SHARE = 8;

/**
 * A block reserves this many times its first request's amounts for each request it is sized for:
 * requests of one kind differ in size (text length, query tokens), and blocks sized on a small
 * one ran out after a few larger ones, each time costing a reservation round trip.
 */
const SIZE_SLACK = 2;
/** Resources whose amount varies from request to request; the others count requests. */
const SIZED_RESOURCES: ReadonlySet<UsageResource> = new Set([
  'embed_tokens',
  'gen_tokens',
  'storage',
]);

/** What a block for `requests` requests like `item` reserves of its resource. */
const blockAmount = (item: MeteredItem, requests: number) =>
  item.amount * requests * (SIZED_RESOURCES.has(item.resource) ? SIZE_SLACK : 1);

/**
 * How long a request waits for the block of its kind another request is opening before it
 * reserves exactly: a block opens in one round trip, and without the wait every request arriving
 * meanwhile made two statements of its own; a hung opening (a database fault) holds each request
 * up by this much at most.
 */
const OPENING_WAIT_MS = 50;

/** How long a refused request waits for its process's idle blocks to give back their remainder. */
const SETTLE_WAIT_MS = 1000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Consumption a block has not written to the counters yet (GET /v1/usage/today adds it). */
export interface UnsettledUsage {
  resource: UsageResource;
  windowKind: WindowKind;
  windowStart: string;
  amount: number;
}

interface Block {
  key: string;
  workspaceId: string;
  reservationId: string;
  items: Map<UsageResource, MeteredItem>;
  /** Reserved from the block by requests, in flight or committed. */
  taken: Map<UsageResource, number>;
  /** Committed by finished requests: what the block's settlement counts as used. */
  committed: Map<UsageResource, number>;
  inFlight: number;
  open: boolean;
  timer: NodeJS.Timeout | undefined;
  settled: Promise<void>;
  markSettled: () => void;
}

const add = (map: Map<UsageResource, number>, resource: UsageResource, amount: number) =>
  map.set(resource, (map.get(resource) ?? 0) + amount);

/**
 * Block metering: rather than two statements per request (reserve, settle), a process reserves
 * a block of units for a whole run of similar requests in one atomic statement, hands them out
 * from memory, and settles the block with what was actually used once it runs out, ages out
 * (`maxAgeMs`) or the process drains. Caps hold as before: a block is itself an atomic, capped
 * reservation; a crashed process's block expires and is refunded like any reservation.
 *
 * Near a cap blocks would hold units other requests need, so a block is sized to at most
 * 1/{@link HEADROOM_SHARE} of the headroom the last reservation saw, and below two requests'
 * worth every request is reserved exactly. The first request of a kind is always exact: it
 * measures the headroom. An exact refusal first settles this process's own idle blocks and
 * retries once, so the last units of a cap are not lost to a block's unused remainder (another
 * instance's blocks give theirs back within `maxAgeMs`).
 */
export class BlockMeter {
  private readonly blocks = new Map<string, Block>();
  private readonly opening = new Map<string, Promise<Block | undefined>>();
  private readonly unsettledBlocks = new Set<Block>();
  /** Requests like the keyed kind the counters could still take, from the last reservation. */
  private readonly headroom = new Map<string, number>();

  constructor(
    private readonly ledger: UsageLedger,
    private readonly options: BlockMeteringOptions,
    private readonly logger?: Logger,
  ) {}

  /**
   * `plan` names the plan in a refusal's message. `exact` reserves and settles this request on
   * its own: a block's consumption reaches the counters only when the block settles, so a
   * process killed before then leaves it uncounted (its reservation expires and is refunded).
   */
  async reserve(
    workspaceId: string,
    items: MeteredItem[],
    plan: string,
    { exact = false }: { exact?: boolean } = {},
  ): Promise<Holding> {
    const key = blockKey(workspaceId, items);
    if (exact) return this.exact(key, workspaceId, items, plan);
    const block = this.blocks.get(key);
    if (block && fits(block, items)) return this.take(block, items);
    if (block) this.close(block);
    const opening = this.opening.get(key);
    if (opening) {
      // Another request is opening this kind's next block: wait for it, but only briefly, so a
      // hung statement holds up one request rather than every request of its kind.
      const fresh = await Promise.race([
        opening.catch(() => undefined),
        delay(OPENING_WAIT_MS).then(() => undefined),
      ]);
      if (fresh && fits(fresh, items)) return this.take(fresh, items);
    } else {
      const requests = Math.min(
        this.options.requestsPerBlock,
        Math.floor((this.headroom.get(key) ?? 0) / (HEADROOM_SHARE * SIZE_SLACK)),
      );
      if (requests >= 2) {
        const opened = this.open(key, workspaceId, items, requests, plan);
        this.opening.set(key, opened);
        let fresh: Block | undefined;
        try {
          fresh = await opened;
        } finally {
          this.opening.delete(key);
        }
        if (fresh && fits(fresh, items)) return this.take(fresh, items);
      }
    }
    return this.exact(key, workspaceId, items, plan);
  }

  /** This process's consumption of a workspace not yet written to its counters. */
  unsettled(workspaceId: string): UnsettledUsage[] {
    const out: UnsettledUsage[] = [];
    for (const block of this.unsettledBlocks) {
      if (block.workspaceId !== workspaceId) continue;
      for (const [resource, amount] of block.committed) {
        const item = block.items.get(resource);
        if (item && amount > 0) {
          out.push({
            resource,
            windowKind: item.windowKind,
            windowStart: item.windowStart,
            amount,
          });
        }
      }
    }
    return out;
  }

  /** Closes every block and waits until each is settled (after its requests in flight end). */
  async drain(): Promise<void> {
    for (const block of [...this.blocks.values()]) this.close(block);
    await Promise.all([...this.unsettledBlocks].map((block) => block.settled));
  }

  private async exact(
    key: string,
    workspaceId: string,
    items: MeteredItem[],
    plan: string,
  ): Promise<Holding> {
    let reserved: { id: string; counters: CounterState[] };
    try {
      reserved = await this.ledger.reserve(workspaceId, items, plan);
    } catch (error) {
      const own = [...this.unsettledBlocks].filter((b) => b.workspaceId === workspaceId);
      if (!isCapExceeded(error) || own.length === 0) throw error;
      // Our own blocks may hold the units this request needs: give back what they did not use.
      // A block with requests in flight settles when they end; waiting for it could wait on
      // requests that wait for this one.
      for (const block of own) this.close(block);
      const idle = own.filter((b) => b.inFlight === 0).map((block) => block.settled);
      await Promise.race([Promise.all(idle), delay(SETTLE_WAIT_MS)]);
      reserved = await this.ledger.reserve(workspaceId, items, plan);
    }
    this.headroom.set(
      key,
      headroomAfter(reserved.counters, items, (item) => item.amount),
    );
    let settled = false;
    const settle = async (outcome: 'committed' | 'released', actual?: Record<string, number>) => {
      if (settled) return;
      await this.ledger.settle(reserved.id, outcome, actual);
      settled = true;
    };
    return {
      commit: (actual) => settle('committed', actual),
      release: () => settle('released'),
    };
  }

  private async open(
    key: string,
    workspaceId: string,
    items: MeteredItem[],
    requests: number,
    plan: string,
  ): Promise<Block | undefined> {
    const blockItems = items.map((item) => ({ ...item, amount: blockAmount(item, requests) }));
    let reserved: { id: string; counters: CounterState[] };
    try {
      reserved = await this.ledger.reserve(workspaceId, blockItems, plan);
    } catch (error) {
      if (!isCapExceeded(error)) throw error;
      // Others used the headroom since we last looked: exact reservations from here on.
      this.headroom.set(key, 0);
      return undefined;
    }
    this.headroom.set(
      key,
      headroomAfter(reserved.counters, items, (item) => blockAmount(item, requests)),
    );
    let markSettled = () => {};
    const settled = new Promise<void>((resolve) => (markSettled = resolve));
    const block: Block = {
      key,
      workspaceId,
      reservationId: reserved.id,
      items: new Map(blockItems.map((item) => [item.resource, item])),
      taken: new Map(),
      committed: new Map(),
      inFlight: 0,
      open: true,
      timer: undefined,
      settled,
      markSettled,
    };
    block.timer = setTimeout(() => this.close(block), this.options.maxAgeMs);
    block.timer.unref();
    this.blocks.set(key, block);
    this.unsettledBlocks.add(block);
    return block;
  }

  private take(block: Block, items: MeteredItem[]): Holding {
    for (const item of items) add(block.taken, item.resource, item.amount);
    block.inFlight += 1;
    let done = false;
    const finish = (consumed: (item: MeteredItem) => number) => {
      if (done) return;
      done = true;
      for (const item of items) {
        const used = consumed(item);
        add(block.taken, item.resource, used - item.amount);
        add(block.committed, item.resource, used);
      }
      block.inFlight -= 1;
      if (!block.open && block.inFlight === 0) this.settle(block);
    };
    return {
      // As with an exact reservation, `actual` replaces what was reserved, resource by resource.
      commit: async (actual) => finish((item) => actual?.[item.resource] ?? item.amount),
      release: async () => finish(() => 0),
    };
  }

  private close(block: Block): void {
    if (!block.open) return;
    block.open = false;
    clearTimeout(block.timer);
    if (this.blocks.get(block.key) === block) this.blocks.delete(block.key);
    if (block.inFlight === 0) this.settle(block);
  }

  private settle(block: Block): void {
    const used = Object.fromEntries(block.committed);
    // Resources nothing committed count zero: the commit replaces the block's reserved amounts.
    for (const resource of block.items.keys()) used[resource] ??= 0;
    this.ledger
      .settle(block.reservationId, 'committed', used)
      .catch((error: unknown) => {
        // The reservation stays open until reconciliation expires and refunds it.
        logBackgroundFailure(
          this.logger,
          error,
          { workspace_id: block.workspaceId },
          'usage block settlement failed',
        );
      })
      .finally(() => {
        this.unsettledBlocks.delete(block);
        block.markSettled();
      });
  }
}

/**
 * Blocks are per workspace, per kind of request (its resources) and per window; a block whose cap
 * is not the request's does not fit it ({@link fits}). Built on every metered request, so plain
 * string concatenation.
 */
function blockKey(workspaceId: string, items: MeteredItem[]): string {
  const parts: string[] = [];
  for (const item of items) parts.push(item.resource + ':' + item.windowStart);
  // Callers list resources in one order already; sorting keeps the key independent of it.
  if (parts.length > 1) parts.sort();
  return workspaceId + '|' + parts.join(',');
}

/** Whether the block is open, under the request's caps, and has the request's amounts left. */
function fits(block: Block, items: MeteredItem[]): boolean {
  if (!block.open) return false;
  for (const item of items) {
    const granted = block.items.get(item.resource);
    if (!granted || granted.cap !== item.cap) return false;
    if (granted.amount - (block.taken.get(item.resource) ?? 0) < item.amount) return false;
  }
  return true;
}

/** How many more requests like `items` the counters take after `reserved` of each was reserved. */
function headroomAfter(
  counters: CounterState[],
  items: MeteredItem[],
  reserved: (item: MeteredItem) => number,
): number {
  let fewest = Number.POSITIVE_INFINITY;
  for (const item of items) {
    if (item.amount <= 0) continue;
    const counter = counters.find((c) => c.resource === item.resource);
    if (!counter) return 0;
    const left =
      Number(counter.cap) - Number(counter.used) - Number(counter.reserved) - reserved(item);
    fewest = Math.min(fewest, Math.floor(left / item.amount));
  }
  return Number.isFinite(fewest) ? Math.max(0, fewest) : 0;
}

const isCapExceeded = (error: unknown) =>
  error instanceof ServiceError && error.code === 'CAP_EXCEEDED';

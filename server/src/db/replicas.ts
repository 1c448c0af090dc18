import { walPosition } from '@mnemo/contract';
import { sql } from 'drizzle-orm';
import type { Logger } from '../logger.js';
import {
  executeRows,
  openDatabase,
  type Database,
  type DatabaseHandle,
  type Reader,
} from './client.js';
import { isConnectionLost } from './faults.js';

export interface ReadReplicaOptions {
  /** `DATABASE_READ_URL`: one or more streaming replicas of the primary. */
  urls: string[];
  /** A replica further behind the primary than this is skipped until it catches up. */
  maxLagMs: number;
  /** How often each replica's replay position (and the primary's WAL position) is read. */
  checkIntervalMs: number;
  timeouts: { statementMs: number; lockMs: number };
  logger: Pick<Logger, 'warn' | 'info'>;
}

/** What /ready and the logs say about one replica: never its URL's credentials. */
export interface ReplicaStatus {
  name: string;
  healthy: boolean;
  /** How far behind the primary it was at the last check, in ms (null: unknown). */
  lagMs: number | null;
}

interface Replica {
  name: string;
  handle: DatabaseHandle;
  healthy: boolean;
  /** The last replay position read from it (0: none yet). */
  replayed: bigint;
  lagMs: number | null;
  /** Answered but not in recovery (a primary given as a read URL): warned once. */
  notStandby: boolean;
}

/** A primary WAL position and when it was read: lag is how old the oldest unreplayed one is. */
interface Sample {
  at: number;
  position: bigint;
}

/** Host and port of a connection string, for logs: no user, no password. */
function replicaName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'replica';
  }
}

const positionOf = async (db: Reader, query: ReturnType<typeof sql>): Promise<bigint | null> => {
  const [row] = await executeRows<{ position: string | null }>(db, query);
  return row?.position ? walPosition(row.position) : null;
};

const REPLAYED = sql`select pg_last_wal_replay_lsn()::text as position`;
const CURRENT = sql`select pg_current_wal_lsn()::text as position`;

/**
 * Streaming replicas that serve reads (docs/scaling.md). A health check reads, every interval,
 * the primary's WAL position and each replica's replay position: a replica that does not answer,
 * or whose replay is older than `maxLagMs`, is skipped until it catches up. Reads without a
 * consistency token go round robin to the healthy ones; a read with a token goes to a replica
 * that has replayed past it (checked once more on the replica when the last check was short),
 * and to the primary otherwise. Replicas are never migrated: the primary's migrations reach them
 * through replication.
 */
export class ReadReplicas {
  private readonly samples: Sample[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  private constructor(
    private readonly primary: Database,
    private readonly replicas: Replica[],
    private readonly options: ReadReplicaOptions,
  ) {}

  /** Opens a pool per replica (lazily connected) and runs the first health check. */
  static async open(primary: Database, options: ReadReplicaOptions): Promise<ReadReplicas> {
    const replicas: Replica[] = [];
    for (const url of options.urls) {
      const handle = await openDatabase({
        databaseUrl: url,
        timeouts: options.timeouts,
        migrate: false,
      });
      replicas.push({
        name: replicaName(url),
        handle,
        healthy: false,
        replayed: 0n,
        lagMs: null,
        notStandby: false,
      });
    }
    const set = new ReadReplicas(primary, replicas, options);
    await set.check();
    set.timer = setInterval(() => void set.check(), options.checkIntervalMs).unref();
    return set;
  }

  /**
   * The reader for one read: a replica that has replayed past the consistency token (any healthy
   * one without a token, unless `primaryWithoutToken`), the primary when none fits.
   */
  async readerFor(token: string | undefined, primaryWithoutToken: boolean): Promise<Reader> {
    const healthy = this.replicas.filter((replica) => replica.healthy);
    if (healthy.length === 0) return this.primary;
    if (token === undefined)
      return primaryWithoutToken ? this.primary : this.pick(healthy).handle.reader;
    const after = walPosition(token);
    const caughtUp = healthy.filter((replica) => replica.replayed >= after);
    if (caughtUp.length > 0) return this.pick(caughtUp).handle.reader;
    // The last check may be older than the write: ask the replicas where they are now.
    const fresh = await Promise.all(
      healthy.map(async (replica) => {
        const replayed = await positionOf(replica.handle.reader, REPLAYED).catch(() => null);
        if (replayed !== null && replayed > replica.replayed) replica.replayed = replayed;
        return replica;
      }),
    );
    const now = fresh.filter((replica) => replica.replayed >= after);
    return now.length > 0 ? this.pick(now).handle.reader : this.primary;
  }

  /** The primary's WAL position now: a write's consistency token. */
  async writePosition(): Promise<string> {
    const [row] = await executeRows<{ position: string }>(this.primary, CURRENT);
    if (!row) throw new Error('pg_current_wal_lsn() returned no row');
    return row.position;
  }

  /** A read on `reader` failed: when its connection was lost, skip that replica until it answers. */
  noteFailure(reader: Reader, error: unknown): void {
    if (!isConnectionLost(error)) return;
    const replica = this.replicas.find((candidate) => candidate.handle.reader === reader);
    if (replica?.healthy) {
      replica.healthy = false;
      this.options.logger.warn({ replica: replica.name }, 'read replica lost; reads go elsewhere');
    }
  }

  status(): ReplicaStatus[] {
    return this.replicas.map(({ name, healthy, lagMs }) => ({ name, healthy, lagMs }));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
    await Promise.all(this.replicas.map((replica) => replica.handle.close()));
  }

  private pick(from: Replica[]): Replica {
    this.next = (this.next + 1) % from.length;
    return from[this.next]!;
  }

  /** One health check; a check still running when the next is due is not doubled. */
  check(): Promise<void> {
    this.checking ??= this.runCheck().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async runCheck(): Promise<void> {
    const now = Date.now();
    const current = await positionOf(this.primary, CURRENT).catch(() => null);
    if (current !== null) {
      this.samples.push({ at: now, position: current });
      // Positions older than the bound say nothing more than "lagging": drop them.
      const horizon = now - 2 * this.options.maxLagMs - this.options.checkIntervalMs;
      while (this.samples.length > 1 && this.samples[0]!.at < horizon) this.samples.shift();
    }
    await Promise.all(this.replicas.map((replica) => this.checkReplica(replica, now)));
  }

  private async checkReplica(replica: Replica, now: number): Promise<void> {
    const wasHealthy = replica.healthy;
    try {
      const replayed = await positionOf(replica.handle.reader, REPLAYED);
      if (replayed === null) {
        // Not in recovery: a primary (or a promoted replica) given as a read URL.
        replica.healthy = false;
        replica.lagMs = null;
        if (!replica.notStandby)
          this.options.logger.warn({ replica: replica.name }, 'read URL is not a standby; skipped');
        replica.notStandby = true;
        return;
      }
      replica.notStandby = false;
      replica.replayed = replayed;
      const oldestUnreplayed = this.samples.find((sample) => sample.position > replayed);
      replica.lagMs = oldestUnreplayed ? now - oldestUnreplayed.at : 0;
      replica.healthy = replica.lagMs <= this.options.maxLagMs;
    } catch {
      replica.healthy = false;
      replica.lagMs = null;
    }
    if (wasHealthy !== replica.healthy)
      this.options.logger.info(
        { replica: replica.name, healthy: replica.healthy, lag_ms: replica.lagMs },
        replica.healthy ? 'read replica serves reads' : 'read replica skipped (down or lagging)',
      );
  }
}

import type { Database } from '../../db/client.js';
import { isDatabaseUnavailable, logBackgroundFailure } from '../../db/faults.js';
import { insertAuditRecords } from '../../db/queries/audit.js';
import type { NewAuditRecord } from '../../db/schema/index.js';
import type { Logger } from '../../logger.js';

export interface AuditRecorderOptions {
  /** Longest a record waits in memory before it is written. */
  flushIntervalMs?: number;
  /** A batch this large is written at once. */
  maxBatch?: number;
  /** Records kept for a retry while the database is unavailable; past it they are dropped. */
  maxBuffered?: number;
  /** Longest wait between retries during an outage (the wait doubles from 250 ms). */
  maxRetryDelayMs?: number;
}

const FIRST_RETRY_DELAY_MS = 250;

/**
 * Writes one audit row per request, off the response path and in batches: one multi-row insert
 * per interval instead of one insert per request (on embedded PGlite, where queries run one at a
 * time, this is most of the cost of a cheap request). Each record keeps the time of its request.
 * `drain` writes what is buffered and waits; shutdown and tests call it. A crash loses at most
 * one interval of records. While the database is unavailable, records are kept (up to
 * `maxBuffered`) and retried with a doubling delay; what does not fit, or is still unwritten when
 * `drain` gives up, is counted in `dropped` and logged.
 */
export class AuditRecorder {
  private buffer: NewAuditRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly flushIntervalMs: number;
  private readonly maxBatch: number;
  private readonly maxBuffered: number;
  private readonly maxRetryDelayMs: number;
  /** While set, the database was unavailable: wait for the retry timer instead of writing. */
  private retryDelayMs = 0;
  private droppedRecords = 0;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    {
      flushIntervalMs = 50,
      maxBatch = 200,
      maxBuffered = 10_000,
      maxRetryDelayMs = 5_000,
    }: AuditRecorderOptions = {},
  ) {
    this.flushIntervalMs = flushIntervalMs;
    this.maxBatch = maxBatch;
    this.maxBuffered = maxBuffered;
    this.maxRetryDelayMs = maxRetryDelayMs;
  }

  /** Records given up on: past `maxBuffered` during an outage, refused by the database, or unwritten at drain. */
  get dropped(): number {
    return this.droppedRecords;
  }

  record(entry: NewAuditRecord): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.drop(1, 'audit buffer full while the database is unavailable; record dropped');
      return;
    }
    this.buffer.push({ createdAt: new Date(), ...entry });
    if (this.buffer.length >= this.maxBatch && this.retryDelayMs === 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushIntervalMs);
  }

  async drain(): Promise<void> {
    this.flush();
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    if (this.buffer.length > 0) {
      // The database is still unavailable: nothing more to wait for at shutdown.
      clearTimeout(this.timer);
      this.timer = undefined;
      this.drop(this.buffer.length, 'audit records unwritten at drain; dropped');
      this.buffer = [];
    }
  }

  private drop(records: number, message: string): void {
    this.droppedRecords += records;
    this.logger.warn({ records, dropped_total: this.droppedRecords }, message);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.buffer.length > 0) {
      // Batches of at most maxBatch rows: a buffer kept through an outage stays under the
      // database's parameter limit.
      const batch = this.buffer.splice(0, this.maxBatch);
      const write = insertAuditRecords(this.db, batch)
        .then(() => {
          this.retryDelayMs = 0;
        })
        .catch((err: unknown) => {
          if (isDatabaseUnavailable(err)) return this.keepForRetry(batch);
          this.droppedRecords += batch.length;
          logBackgroundFailure(
            this.logger,
            err,
            { records: batch.length, request_ids: batch.slice(0, 5).map((r) => r.requestId) },
            'audit write failed',
          );
        })
        .finally(() => this.pending.delete(write));
      this.pending.add(write);
    }
  }

  /** Puts a batch the database could not take back in front, and retries after a delay. */
  private keepForRetry(batch: NewAuditRecord[]): void {
    const room = Math.max(0, this.maxBuffered - this.buffer.length);
    const kept = batch.slice(0, room);
    if (kept.length < batch.length) {
      this.drop(batch.length - kept.length, 'audit buffer full while the database is unavailable');
    }
    this.buffer = [...kept, ...this.buffer];
    const first = this.retryDelayMs === 0;
    this.retryDelayMs = Math.min(
      this.maxRetryDelayMs,
      first ? FIRST_RETRY_DELAY_MS : this.retryDelayMs * 2,
    );
    if (first) {
      this.logger.warn(
        { records: this.buffer.length },
        'database unavailable; audit records kept for a retry',
      );
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), this.retryDelayMs);
    this.timer.unref();
  }
}

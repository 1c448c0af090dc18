import type { Database } from '../db/client.js';
import { logBackgroundFailure } from '../db/faults.js';
import { insertAuditRecords } from '../db/queries/audit.js';
import type { NewAuditRecord } from '../db/schema/index.js';
import type { Logger } from '../logger.js';

export interface AuditRecorderOptions {
  /** Longest a record waits in memory before it is written. */
  flushIntervalMs?: number;
  /** A batch this large is written at once. */
  maxBatch?: number;
}

/**
 * Writes one audit row per request, off the response path and in batches: one multi-row insert
 * per interval instead of one insert per request (on embedded PGlite, where queries run one at a
 * time, this is most of the cost of a cheap request). Each record keeps the time of its request.
 * `drain` writes what is buffered and waits; shutdown and tests call it. A crash loses at most
 * one interval of records.
 */
export class AuditRecorder {
  private buffer: NewAuditRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly flushIntervalMs: number;
  private readonly maxBatch: number;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    { flushIntervalMs = 50, maxBatch = 200 }: AuditRecorderOptions = {},
  ) {
    this.flushIntervalMs = flushIntervalMs;
    this.maxBatch = maxBatch;
  }

  record(entry: NewAuditRecord): void {
    this.buffer.push({ createdAt: new Date(), ...entry });
    if (this.buffer.length >= this.maxBatch) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushIntervalMs);
  }

  async drain(): Promise<void> {
    this.flush();
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    const write = insertAuditRecords(this.db, batch)
      .catch((err: unknown) => {
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

import type { Database } from '../db/client.js';
import { insertAuditRecord } from '../db/queries/audit.js';
import type { NewAuditRecord } from '../db/schema/index.js';
import type { Logger } from '../logger.js';

/**
 * Writes one audit row per request off the response path. Writes are tracked so shutdown and
 * tests can wait for them (`drain`).
 */
export class AuditRecorder {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {}

  record(entry: NewAuditRecord): void {
    const write = insertAuditRecord(this.db, entry)
      .then(() => undefined)
      .catch((err: unknown) => {
        this.logger.error({ err, request_id: entry.requestId }, 'audit write failed');
      })
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

import { sql } from 'drizzle-orm';
import type { Logger } from '../logger.js';
import { executeRows, type DatabaseHandle } from './client.js';

/**
 * Keeps planner statistics fresh. Embedded PGlite has no autovacuum at all, and on PostgreSQL
 * autoanalyze only looks once a minute: until then a young table has no statistics and the
 * planner's guesses for recall joins are poor (measured on PGlite: 50 ms instead of 3 ms for one
 * owner's 300 memories). Uses autoanalyze's own rule: analyze once changed rows pass
 * 50 + 10% of the table; with several instances each does so for its own writes, which is
 * harmless.
 */
export class StatisticsKeeper {
  private changed = 0;
  private rowsAtLastAnalyze = 0;
  private running: Promise<void> | undefined;

  constructor(
    private readonly database: DatabaseHandle,
    private readonly logger: Logger,
  ) {}

  /** Counts changed rows; starts an ANALYZE in the background when enough changed. */
  noteChanges(rows: number): void {
    this.changed += rows;
    if (!this.running && this.changed >= 50 + 0.1 * this.rowsAtLastAnalyze) {
      this.running = this.analyze().finally(() => {
        this.running = undefined;
      });
    }
  }

  async analyze(): Promise<void> {
    this.changed = 0;
    try {
      await this.database.db.execute(sql`analyze memories, memory_chunks, memory_links`);
      const [row] = await executeRows<{ rows: number }>(
        this.database.db,
        sql`select coalesce(sum(reltuples), 0)::float8 as rows from pg_class where relname in ('memories', 'memory_chunks')`,
      );
      this.rowsAtLastAnalyze = Number(row?.rows ?? 0);
    } catch (err) {
      this.logger.warn({ err }, 'analyze failed; the planner keeps its old statistics');
    }
  }

  async drain(): Promise<void> {
    await this.running;
  }
}

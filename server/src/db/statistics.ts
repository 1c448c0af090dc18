import { sql } from 'drizzle-orm';
import type { Logger } from '../logger.js';
import { executeRows, type DatabaseHandle } from './client.js';

/**
 * Keeps planner statistics fresh. Embedded PGlite has no autovacuum at all, and on PostgreSQL
 * autoanalyze only looks once a minute: until then a young table has no statistics and the
 * planner's guesses for recall joins are poor (measured on PGlite: 50 ms instead of 3 ms for one
 * owner's 300 memories). Uses autoanalyze's own rule: once changed rows pass 50 + 10% of the
 * table, a VACUUM (ANALYZE) in the background; with several instances each does so for its own
 * writes, which is harmless. VACUUM, not only ANALYZE: without it (PGlite never vacuums; some
 * PostgreSQL installations run with autovacuum off) the full-text index's pending list grows with
 * every insert and each keyword query reads all of it (8–17 ms at 100k memories, measured), and
 * counting an owner's chunks visits the heap instead of the visibility map.
 */
export class StatisticsKeeper {
  private changed = 0;
  private rowsAtLastAnalyze = 0;
  private running: Promise<void> | undefined;

  constructor(
    private readonly database: DatabaseHandle,
    private readonly logger: Logger,
  ) {}

  /** Counts changed rows; starts a VACUUM (ANALYZE) in the background when enough changed. */
  noteChanges(rows: number): void {
    this.changed += rows;
    if (this.changed >= 50 + 0.1 * this.rowsAtLastAnalyze)
      this.inBackground(() => this.analyze(true));
  }

  /** At start-up: statistics now (the first plans need them), a vacuum in the background. */
  async start(): Promise<void> {
    await this.analyze(false);
    this.inBackground(() => this.vacuum());
  }

  private inBackground(task: () => Promise<void>): void {
    if (this.running) return;
    this.running = task().finally(() => {
      this.running = undefined;
    });
  }

  private async vacuum(): Promise<void> {
    try {
      await this.database.db.execute(sql`vacuum memories, memory_chunks, memory_links`);
    } catch (err) {
      this.logger.warn({ err }, 'vacuum failed');
    }
  }

  async analyze(withVacuum = false): Promise<void> {
    this.changed = 0;
    try {
      await this.database.db.execute(
        withVacuum
          ? sql`vacuum (analyze) memories, memory_chunks, memory_links`
          : sql`analyze memories, memory_chunks, memory_links`,
      );
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

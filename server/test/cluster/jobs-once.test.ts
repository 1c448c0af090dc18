import type { ScheduledJobsReport } from '@mnemo/contract';
import { afterAll, expect, it } from 'vitest';
import { describeDb } from '../support/db.js';
import type { Started } from '../support/server-process.js';
import { freshDatabase, startInstances, stopInstances } from './instances.js';

const INSTANCES = 3;
const PERIOD_MS = 2_000;
const ADMIN_TOKEN = 'cluster-admin-token-0123456789';

describeDb('scheduled jobs across instances', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('runs each period once whatever the number of instances, and reports the last run', async () => {
    const { database, sql, drop } = await freshDatabase();
    cleanup.push(drop);
    const began = Date.now();
    let instances: Started[] = await startInstances(INSTANCES, {
      DATABASE_URL: database.databaseUrl,
      MNEMO_ADMIN_TOKEN: ADMIN_TOKEN,
      MNEMO_HYGIENE_INTERVAL_MS: String(PERIOD_MS),
      MNEMO_SESSION_CLEANUP_INTERVAL_MS: String(PERIOD_MS),
      MNEMO_USAGE_RECONCILE_INTERVAL_MS: String(PERIOD_MS),
    });
    cleanup.push(() => stopInstances(instances));
    // Several periods with every instance up.
    await new Promise((resolve) => setTimeout(resolve, 5 * PERIOD_MS));

    const response = await fetch(`${instances[1]!.baseUrl}/v1/admin/jobs`, {
      headers: { 'x-admin-token': ADMIN_TOKEN },
    });
    expect(response.status).toBe(200);
    const report = (await response.json()) as ScheduledJobsReport;
    expect(report.runner).toBe('pg-boss');
    const hygiene = report.jobs.find((job) => job.name === 'memory-hygiene');
    expect(hygiene).toMatchObject({ interval_ms: PERIOD_MS, status: expect.any(String) });
    expect(hygiene!.runs).toBeGreaterThanOrEqual(2);
    expect(Date.parse(hygiene!.next_run_at!)).toBeGreaterThan(Date.now() - PERIOD_MS);

    await stopInstances(instances);
    instances = [];
    for (const name of ['memory-hygiene', 'dashboard-session-cleanup', 'usage-reconcile']) {
      // One job per period (pg-boss's throttle slot), each run by one instance only.
      const jobs = await sql<{ slot: Date; state: string }[]>`
        select singleton_on as slot, state from pgboss.job where name = ${name}
        union all
        select singleton_on, state from pgboss.archive where name = ${name}`;
      const slots = new Set(jobs.map((job) => job.slot.getTime()));
      expect(slots.size, name).toBe(jobs.length);
      const completed = jobs.filter((job) => job.state === 'completed').length;
      expect(completed, name).toBeGreaterThanOrEqual(3);
      const [record] = await sql<{ runs: number; failures: number }[]>`
        select runs::int, failures::int from job_runs where name = ${name}`;
      // Every completed job was one recorded run (a run cut by the stop may be recorded only).
      expect(record!.runs - completed, name).toBeGreaterThanOrEqual(0);
      expect(record!.runs - completed, name).toBeLessThanOrEqual(1);
      expect(record!.failures, name).toBe(0);
      // Per-instance timers would have run about INSTANCES times per period.
      expect(record!.runs, name).toBeLessThanOrEqual(Math.ceil((Date.now() - began) / PERIOD_MS));
    }
    // Re-embedding runs when instances start: once for the three.
    const [reembed] = await sql<{ runs: number }[]>`
      select runs::int from job_runs where name = 'reembed'`;
    expect(reembed?.runs).toBe(1);
  }, 240_000);
});

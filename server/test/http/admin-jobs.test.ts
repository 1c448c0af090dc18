import type { ScheduledJobsReport } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inProcessRunner } from '../../src/jobs/runner.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';
import { recordingLogger } from '../support/recording-logger.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeDb('scheduled jobs: the runner records every run, GET /v1/admin/jobs shows them', () => {
  const TOKEN = 'admin-token-0123456789';
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_ADMIN_TOKEN: TOKEN, MNEMO_HYGIENE_INTERVAL_MS: '200' });
  });
  afterAll(async () => t?.close());

  const report = async () => {
    const res = await request(t.app).get('/v1/admin/jobs').set('x-admin-token', TOKEN);
    expect(res.status).toBe(200);
    return res.body as ScheduledJobsReport;
  };

  it('lists every job with its schedule before any run', async () => {
    const before = await report();
    expect(before.runner).toBe('in-process');
    expect(before.jobs.map((job) => job.name)).toEqual([
      'memory-hygiene',
      'memory-retention',
      'usage-reconcile',
      'billing-reprocess',
      'dashboard-session-cleanup',
      'reembed',
    ]);
    expect(before.jobs[0]).toMatchObject({
      interval_ms: 200,
      at_start: false,
      status: 'never_run',
      runs: 0,
      last_started_at: null,
    });
    // Billing is off here: its job never runs.
    expect(before.jobs[3]).toMatchObject({ interval_ms: 0, next_run_at: null });
  });

  it('records succeeded and failed runs, each period once, and stops with the runner', async () => {
    const { logger } = recordingLogger();
    let runs = 0;
    const runner = inProcessRunner(t.database.db, logger, [
      {
        name: 'memory-hygiene',
        intervalMs: 200,
        run: async () => {
          runs += 1;
        },
      },
      {
        name: 'usage-reconcile',
        intervalMs: 200,
        run: async () => {
          throw Object.assign(new Error('relation "x" does not exist: secret value'), {
            code: '42P01',
          });
        },
      },
    ]);
    const started = Date.now();
    await runner.start();
    await sleep(1_000);
    await runner.stop();
    const elapsed = Date.now() - started;
    const after = runs;
    await sleep(400);
    expect(runs).toBe(after);
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(Math.ceil(elapsed / 200));

    const jobs = new Map((await report()).jobs.map((job) => [job.name, job]));
    expect(jobs.get('memory-hygiene')).toMatchObject({
      status: 'succeeded',
      runs,
      failures: 0,
      last_error: null,
      attempt: 1,
    });
    const hygiene = jobs.get('memory-hygiene')!;
    expect(Date.parse(hygiene.last_finished_at!)).toBeGreaterThanOrEqual(
      Date.parse(hygiene.last_started_at!),
    );
    expect(Date.parse(hygiene.next_run_at!)).toBeGreaterThan(Date.now() - 200);
    const failed = jobs.get('usage-reconcile')!;
    expect(failed).toMatchObject({ status: 'failed', last_error: '42P01' });
    expect(failed.failures).toBe(failed.runs);
    expect(JSON.stringify(failed)).not.toContain('secret value');
  });
});

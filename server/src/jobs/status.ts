import type { ScheduledJobsReport } from '@mnemo/contract';
import type { Reader } from '../db/client.js';
import { listJobRuns } from '../db/queries/job-runs.js';
import type { JobSchedule } from './catalogue.js';
import { nextSlot } from './runner.js';

/** `GET /v1/admin/jobs`: every job's schedule with its last recorded run, from any instance. */
export async function scheduledJobsReport(
  db: Reader,
  { schedules, runner }: { schedules: JobSchedule[]; runner: ScheduledJobsReport['runner'] },
  now: number = Date.now(),
): Promise<ScheduledJobsReport> {
  const runs = new Map((await listJobRuns(db)).map((run) => [run.name, run]));
  return {
    runner,
    jobs: schedules.map((schedule) => {
      const run = runs.get(schedule.name);
      const periodic = !schedule.atStart && schedule.intervalMs > 0;
      return {
        name: schedule.name,
        interval_ms: schedule.intervalMs,
        at_start: schedule.atStart,
        status: (run?.status as 'running' | 'succeeded' | 'failed' | undefined) ?? 'never_run',
        last_started_at: run?.lastStartedAt.toISOString() ?? null,
        last_finished_at: run?.lastFinishedAt?.toISOString() ?? null,
        last_duration_ms: run?.lastDurationMs ?? null,
        last_error: run?.lastError ?? null,
        attempt: run?.attempt ?? null,
        runs: run?.runs ?? 0,
        failures: run?.failures ?? 0,
        next_run_at: periodic ? new Date(nextSlot(schedule.intervalMs, now)).toISOString() : null,
      };
    }),
  };
}

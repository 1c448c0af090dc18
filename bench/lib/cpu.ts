/**
 * CPU of a process and of a database's PostgreSQL backends, from /proc (clock ticks, USER_HZ):
 * what a request costs, which stays comparable when other work on the machine moves latencies.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import type { StatementCount } from './server.js';

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process (all its threads, dead ones included), in ms; NaN if gone. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces), from field 3 on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime (14), stime (15)
  return (ticks * 1000) / CLK_TCK;
}

/**
 * CPU of every client backend of the database (but the measuring session), by pid. Autovacuum
 * workers are left out: after a bulk load they run for minutes and would be charged to whatever
 * requests ran beside them.
 */
export async function backendCpu(
  raw: postgres.Sql,
  database: string,
): Promise<Map<number, number>> {
  const { own } = await backendCpuOf(raw, database, undefined);
  return own;
}

/**
 * {@link backendCpu} split in one reading: `own`, the backends whose sessions named themselves
 * `applicationName` (one server's, when its DATABASE_URL carries its own `application_name`),
 * and `others`, the rest. With no name every backend is `own`.
 */
export async function backendCpuOf(
  raw: postgres.Sql,
  database: string,
  applicationName: string | undefined,
): Promise<{ own: Map<number, number>; others: Map<number, number> }> {
  const rows = await raw<{ pid: number; application_name: string }[]>`
    select pid, application_name from pg_stat_activity
    where datname = ${database} and backend_type = 'client backend' and pid <> pg_backend_pid()`;
  const own = new Map<number, number>();
  const others = new Map<number, number>();
  for (const { pid, application_name } of rows) {
    const value = await cpuMs(pid);
    if (!Number.isFinite(value)) continue;
    const mine = applicationName === undefined || application_name === applicationName;
    (mine ? own : others).set(pid, value);
  }
  return { own, others };
}

/** CPU the backends used between two snapshots (a backend started in between counts from 0). */
export function backendDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, value] of after) total += value - (before.get(pid) ?? 0);
  return total;
}

/** What a stretch of load cost: CPU ms of the server process and of the backends, statements sent. */
export interface Cost {
  serverCpuMs: number;
  dbCpuMs: number;
  /** Statements the server sent (NaN when they are not counted, e.g. on PGlite). */
  statements: number;
  /** Of those, the ones that wrote deferred batches (audit rows, learning signals, saved searches). */
  deferredStatements: number;
}

export const noCost = (): Cost => ({
  serverCpuMs: 0,
  dbCpuMs: 0,
  statements: 0,
  deferredStatements: 0,
});

export function addCost(into: Cost, more: Cost): void {
  into.serverCpuMs += more.serverCpuMs;
  into.dbCpuMs += more.dbCpuMs;
  into.statements += more.statements;
  into.deferredStatements += more.deferredStatements;
}

/**
 * The client the backend readings run on: one connection, so the session a reading leaves out
 * (its own) is the same every time. From a pool, a reading on another connection would count the
 * one the last reading left out with all the CPU it ever used (a VACUUM after a bulk load, say)
 * as spent during the block.
 */
export function readingClient(databaseUrl: string): postgres.Sql {
  return postgres(databaseUrl, { max: 1, onnotice: () => {} });
}

/** Reads a server's costs; `database` undefined: no PostgreSQL backends to read (PGlite). */
export interface CostProbe {
  pid: number;
  statements(): Promise<StatementCount>;
  /** `raw`: a {@link readingClient}. */
  database?: { raw: postgres.Sql; name: string };
}

/** Runs `work` bracketed by readings of the probe; returns its result and what it cost. */
export async function measured<T>(probe: CostProbe, work: () => Promise<T>): Promise<[T, Cost]> {
  const read = () =>
    Promise.all([
      cpuMs(probe.pid),
      probe.database
        ? backendCpu(probe.database.raw, probe.database.name)
        : Promise.resolve(new Map<number, number>()),
      probe.statements(),
    ]);
  const [cpu0, db0, n0] = await read();
  const result = await work();
  const [cpu1, db1, n1] = await read();
  return [
    result,
    {
      serverCpuMs: cpu1 - cpu0,
      dbCpuMs: backendDelta(db0, db1),
      statements: n1.all - n0.all,
      deferredStatements: n1.deferred - n0.deferred,
    },
  ];
}

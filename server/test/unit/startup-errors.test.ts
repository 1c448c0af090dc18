import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DataDirInUseError } from '../../src/db/data-dir-lock.js';
import { limitsSummary } from '../../src/services/plans.js';
import {
  databaseFailure,
  describeStartupFailure,
  listenFailure,
  redactDatabaseUrl,
} from '../../src/startup-errors.js';

/** drizzle wraps the driver's error: `Failed query: …` with the real one as its cause. */
function wrapped(cause: object): Error {
  return Object.assign(new Error('Failed query: select pg_advisory_lock($1::bigint)\nparams: 7'), {
    cause,
  });
}

describe('start-up failure lines', () => {
  const postgres = { databaseUrl: 'postgres://app:pa55word@db.internal:5432/mnemo', dataDir: 'x' };

  it('hides the password and the query string of a database URL', () => {
    expect(
      redactDatabaseUrl('postgres://app:pa55word@db:5432/mnemo?sslmode=require&password=p'),
    ).toBe('postgres://app:***@db:5432/mnemo');
    expect(redactDatabaseUrl('postgres://db/mnemo')).toBe('postgres://db/mnemo');
    expect(redactDatabaseUrl('not a url pa55word')).not.toContain('pa55word');
  });

  it('names the socket cause of an unreachable database, found under the wrapper', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(databaseFailure(wrapped(refused), postgres).message).toBe(
      'mnemo: cannot reach the database at postgres://app:***@db.internal:5432/mnemo (ECONNREFUSED: connection refused): start PostgreSQL there, or set DATABASE_URL to one that runs (unset: the embedded database in MNEMO_DATA_DIR)',
    );
    const lookup = new AggregateError([Object.assign(new Error('x'), { code: 'ENOTFOUND' })]);
    expect(databaseFailure(lookup, postgres).message).toContain('(ENOTFOUND: host not found)');
  });

  it("gives PostgreSQL's own refusal with its SQLSTATE and the fix", () => {
    const answer = (code: string, message: string) =>
      databaseFailure(
        wrapped(Object.assign(new Error(message), { code, severity: 'FATAL' })),
        postgres,
      ).message;
    expect(answer('28P01', 'password authentication failed for user "app"')).toBe(
      'mnemo: the database at postgres://app:***@db.internal:5432/mnemo refused (28P01: password authentication failed for user "app"): check the user and password in DATABASE_URL',
    );
    expect(answer('0A000', 'extension "vector" is not available')).toMatch(/install pgvector/);
    expect(answer('3D000', 'database "mnemo" does not exist')).toMatch(/create that database/);
  });

  it('says which folder the embedded database could not open, and MNEMO_DATA_DIR', () => {
    const denied = Object.assign(new Error("EACCES: permission denied, mkdir '/srv/x'"), {
      code: 'EACCES',
    });
    const line = databaseFailure(denied, { databaseUrl: undefined, dataDir: '/srv/x' }).message;
    expect(line).toMatch(/^mnemo: cannot open the embedded database in \/srv\/x \(EACCES: /);
    expect(line).toContain('MNEMO_DATA_DIR');
    const inUse = new DataDirInUseError('The data folder /srv/x is in use by process 7');
    expect(databaseFailure(inUse, { databaseUrl: undefined, dataDir: '/srv/x' })).toBe(inUse);
  });

  it('names the port and PORT, or the host and HOST, when listening fails', () => {
    const error = (code: string) => Object.assign(new Error(code), { code });
    expect(listenFailure(error('EADDRINUSE'), '0.0.0.0', 8787).message).toBe(
      'mnemo: port 8787 on 0.0.0.0 is already in use (EADDRINUSE): stop the process that holds it, or set PORT to a free port',
    );
    expect(listenFailure(error('EACCES'), '0.0.0.0', 80).message).toMatch(/port 80 .*set PORT/);
    expect(listenFailure(error('EADDRNOTAVAIL'), '10.9.9.9', 8787).message).toMatch(
      /cannot listen on 10\.9\.9\.9 .*set HOST/,
    );
  });

  it('flattens a configuration error to one line; an unknown failure keeps its stack', () => {
    expect(
      describeStartupFailure(
        new ConfigError('Invalid configuration:\n  PORT: Expected number\n  HOST: Required'),
      ),
    ).toBe('mnemo: invalid configuration: PORT: Expected number; HOST: Required');
    const bug = describeStartupFailure(new TypeError('x is undefined'));
    expect(bug).toMatch(/^mnemo failed to start: TypeError: x is undefined\n\s+at /);
  });
});

describe('the limits stated at start', () => {
  it('self-hosted default: scale limits, no retention, and the variables that change it', () => {
    const summary = limitsSummary(loadConfig({}));
    expect(summary.message).toBe(
      'limits: plan scale, 60 requests/min per API key, 300 per workspace, 20,000 writes and 60,000 reads a day; no retention: memories are kept until deleted (the self-hosted default; MNEMO_INTERNAL_GRANT_PLAN chooses a plan and its retention, MNEMO_LIMITS=off lifts every limit)',
    );
    expect(summary.fields).toMatchObject({
      plan: 'scale',
      plan_chosen: false,
      retention_days: null,
    });
  });

  it('a chosen plan: its limits and its retention', () => {
    const summary = limitsSummary(loadConfig({ MNEMO_INTERNAL_GRANT_PLAN: 'deploy' }));
    expect(summary.message).toMatch(
      /^limits: plan deploy, 60 requests\/min per API key, 120 per workspace, 5,000 writes and 15,000 reads a day; retention: memories older than 180 days are archived daily/,
    );
    expect(summary.fields).toMatchObject({
      plan: 'deploy',
      plan_chosen: true,
      retention_days: 180,
    });
  });

  it('limits off, or billing: says so', () => {
    expect(limitsSummary(loadConfig({ MNEMO_LIMITS: 'off' })).message).toMatch(/^limits: off/);
    const billing = loadConfig({
      MNEMO_BILLING_PROVIDER: 'payu',
      MNEMO_BILLING_KEY: 'k',
      MNEMO_BILLING_SALT: 's',
      MNEMO_BILLING_SUCCESS_URL: 'https://example.test/ok',
      MNEMO_BILLING_FAILURE_URL: 'https://example.test/no',
    });
    expect(billing.limits.internalGrantRetention).toBe(true);
    expect(limitsSummary(billing).message).toMatch(/^limits: billing \(payu\)/);
  });

  it('retention applies to internal grants only when the plan was chosen', () => {
    expect(loadConfig({}).limits).toMatchObject({
      internalGrantPlan: 'scale',
      internalGrantRetention: false,
    });
    expect(loadConfig({ MNEMO_INTERNAL_GRANT_PLAN: 'scale' }).limits).toMatchObject({
      internalGrantPlan: 'scale',
      internalGrantRetention: true,
    });
    expect(loadConfig({ MNEMO_INTERNAL_GRANT_PLAN: '' }).limits.internalGrantRetention).toBe(false);
  });

  it('LOG_FORMAT: json or pretty, unset by default', () => {
    expect(loadConfig({}).logFormat).toBeUndefined();
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(ConfigError);
  });
});

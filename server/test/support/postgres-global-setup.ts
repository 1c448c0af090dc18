import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migratePostgres } from '../../src/db/migrate.js';
import { adminDatabaseUrl, databaseUrlFor, redactUrl } from './postgres.js';

/**
 * Global setup of the `postgres` test project: probes the server once. Unreachable is fatal on
 * CI (both backends must run there) and a loud skip locally, so a laptop without PostgreSQL can
 * still run `pnpm test`.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const url = adminDatabaseUrl();
  try {
    await probe(url);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const line = `PostgreSQL not reachable at ${redactUrl(url)} (${reason}): the PostgreSQL suite was NOT run`;
    if (process.env.CI === 'true')
      throw new Error(`${line}. CI must run it; set TEST_DATABASE_URL.`);
    const bar = '!'.repeat(Math.min(line.length, 120));
    console.warn(`\n${bar}\n${line}\n${bar}\n`);
    project.provide('postgresAvailable', false);
    return;
  }
  project.provide('postgresAvailable', true);
  const template = await createMigratedTemplate(url);
  project.provide('postgresTemplate', template);
  return async () => {
    await withAdmin(url, (sql) => sql.unsafe(`drop database if exists "${template}" with (force)`));
  };
}

/**
 * A migrated database that each test database is copied from (`create database … template`),
 * which is much faster than migrating every one. Nothing stays connected to it, as copying needs.
 */
async function createMigratedTemplate(url: string): Promise<string> {
  const name = `mnemo_test_template_${randomBytes(6).toString('hex')}`;
  await withAdmin(url, (sql) => sql.unsafe(`create database "${name}"`));
  await migratePostgres(databaseUrlFor(url, name));
  return name;
}

async function withAdmin<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Connects and checks that pgvector can be created, inside a rolled-back transaction. */
async function probe(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await sql`select 1`;
    await sql
      .begin(async (tx) => {
        await tx`create extension if not exists vector`;
        throw new RollbackProbe();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RollbackProbe)) throw error;
      });
  } finally {
    await sql.end({ timeout: 5 });
  }
}

class RollbackProbe extends Error {}

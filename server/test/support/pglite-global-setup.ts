import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import type { TestProject } from 'vitest/node';
import { PGLITE_EXTENSIONS } from '../../src/db/pglite-extensions.js';
import { migratePglite } from '../../src/db/migrate.js';

/**
 * Global setup of the `pglite` test project: boots and migrates one embedded database and dumps
 * its data directory, so each test database starts from the dump instead of running initdb and
 * every migration again (seconds per database).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const folder = await mkdtemp(join(tmpdir(), 'mnemo-pglite-'));
  const path = join(folder, 'migrated.tar');
  const client = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  try {
    await migratePglite(drizzle({ client }));
    const dump = await client.dumpDataDir('none');
    await writeFile(path, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await client.close();
  }
  project.provide('pgliteDumpPath', path);
  return () => rm(folder, { recursive: true, force: true });
}

import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { type DatabaseHandle, executeRows, openDatabase } from '../../src/db/client.js';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { MIGRATIONS_FOLDER } from '../../src/db/migrate.js';
import { createEmptyPostgresDatabase, describeDb, testBackend } from '../support/db.js';

describeDb('migrations', () => {
  it('finds the committed migrations, the pgvector one first', () => {
    const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
    expect(migrations.length).toBeGreaterThanOrEqual(2);
    expect(migrations[0]?.sql.join('\n')).toMatch(/create extension if not exists vector/i);
  });

  it.runIf(testBackend() === 'postgres')(
    'several instances starting together apply the migrations once (advisory lock)',
    async () => {
      const empty = await createEmptyPostgresDatabase();
      const handles: DatabaseHandle[] = [];
      try {
        const opened = await Promise.allSettled(
          Array.from({ length: 4 }, () => openDatabase({ databaseUrl: empty.databaseUrl })),
        );
        for (const result of opened) if (result.status === 'fulfilled') handles.push(result.value);
        expect(opened.map((r) => r.status)).toEqual([
          'fulfilled',
          'fulfilled',
          'fulfilled',
          'fulfilled',
        ]);

        const first = handles[0];
        if (!first) throw new Error('no handle');
        const applied = await executeRows<{ count: string | number }>(
          first.db,
          sql`select count(*) as count from drizzle.__drizzle_migrations`,
        );
        const expected = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).length;
        expect(Number(applied[0]?.count)).toBe(expected);
      } finally {
        await Promise.all(handles.map((h) => h.close()));
        await empty.drop();
      }
    },
  );

  it.runIf(testBackend() === 'postgres')(
    'reopening an already migrated database is a no-op',
    async () => {
      const empty = await createEmptyPostgresDatabase();
      try {
        await (await openDatabase({ databaseUrl: empty.databaseUrl })).close();
        const again = await openDatabase({ databaseUrl: empty.databaseUrl });
        await again.ping();
        await again.close();
      } finally {
        await empty.drop();
      }
    },
  );
});

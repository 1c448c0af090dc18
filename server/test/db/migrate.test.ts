import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { expect, it } from 'vitest';
import { type DatabaseHandle, executeRows, openDatabase, runtimeOf } from '../../src/db/client.js';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { MIGRATIONS_FOLDER } from '../../src/db/migrate.js';
import { cosineDistanceTo, embeddingDimensionIs } from '../../src/db/queries/vector.js';
import { memoryChunks } from '../../src/db/schema/index.js';
import { createEmptyPostgresDatabase, describeDb, testBackend } from '../support/db.js';

describeDb('migrations', () => {
  it('finds the committed migrations, the pgvector one first', () => {
    const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
    expect(migrations.length).toBeGreaterThanOrEqual(2);
    expect(migrations[0]?.sql.join('\n')).toMatch(/create extension if not exists vector/i);
  });

  it('opens without migrating when asked, then migrates on the next open', async () => {
    const empty = testBackend() === 'postgres' ? await createEmptyPostgresDatabase() : undefined;
    const options = empty ? { databaseUrl: empty.databaseUrl } : {};
    const tableOf = async (handle: DatabaseHandle) =>
      (
        await executeRows<{ t: string | null }>(
          handle.reader,
          sql`select to_regclass('public.domain_events')::text as t`,
        )
      )[0]?.t ?? null;
    try {
      const bare = await openDatabase({ ...options, migrate: false });
      try {
        expect(await tableOf(bare)).toBeNull();
        // The handle owns its runtime; its reader and writer reach it.
        expect(runtimeOf(bare.reader)).toBe(bare.runtime);
        expect(runtimeOf(bare.writer)).toBe(bare.runtime);
      } finally {
        await bare.close();
      }
      if (!empty) return; // An in-memory PGlite does not outlive its handle.
      const migrated = await openDatabase(options);
      try {
        expect(await tableOf(migrated)).toBe('domain_events');
      } finally {
        await migrated.close();
      }
    } finally {
      await empty?.drop();
    }
  });

  it('gives every handle plan caches of its own', async () => {
    const [a, b] = [await openDatabase({ migrate: false }), await openDatabase({ migrate: false })];
    try {
      expect(a.runtime.planCaches).not.toBe(b.runtime.planCaches);
      a.runtime.planCaches.noteOwnerChunks('owner', 3);
      expect(a.runtime.planCaches.ownerChunks('owner')).toBe(3);
      expect(b.runtime.planCaches.ownerChunks('owner')).toBeUndefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
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

  it.runIf(testBackend() === 'postgres')(
    'the archive-rule migration names the rule of archives made before it',
    async () => {
      const empty = await createEmptyPostgresDatabase();
      const client = postgres(empty.databaseUrl, { max: 1, onnotice: () => {} });
      try {
        const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
        const at = migrations.findIndex((m) => m.sql.join('\n').includes('"archive_rule" text'));
        expect(at).toBeGreaterThan(0);
        const apply = async (migration: (typeof migrations)[number]) => {
          for (const statement of migration.sql) await client.unsafe(statement);
        };
        for (const migration of migrations.slice(0, at)) await apply(migration);
        const [ws] = await client`insert into workspaces (name) values ('w') returning id`;
        const insert = (text: string, state: string) =>
          client`insert into memories (workspace_id, owner_id, text, content_hash, lifecycle_state)
            values (${ws!.id}, 'u', ${text}, ${text}, ${state}) returning id`;
        const [expired] = await insert('expired', 'archived');
        const [retained] = await insert('retained', 'archived');
        const [live] = await insert('live', 'active');
        const event = (memoryId: string, event: string, rule: string, at: string) =>
          client`insert into memory_lifecycle_events (workspace_id, memory_id, event, rule, created_at)
            values (${ws!.id}, ${memoryId}, ${event}, ${rule}, ${at})`;
        await event(expired!.id, 'archived', 'expiry', '2026-01-01T00:00:00Z');
        await event(retained!.id, 'merged', 'evolution', '2026-01-01T00:00:00Z');
        await event(retained!.id, 'archived', 'retention', '2026-02-01T00:00:00Z');
        await event(live!.id, 'merged', 'evolution', '2026-01-01T00:00:00Z');

        await apply(migrations[at]!);
        const rows = await client<{ text: string; archive_rule: string | null }[]>`
          select text, archive_rule from memories order by text`;
        expect(rows).toEqual([
          { text: 'expired', archive_rule: 'expiry' },
          { text: 'live', archive_rule: null },
          { text: 'retained', archive_rule: 'retention' },
        ]);
      } finally {
        await client.end();
        await empty.drop();
      }
    },
  );
  it.runIf(testBackend() === 'postgres')(
    'the outbox migration moves the lifecycle history into domain_events, in order',
    async () => {
      const empty = await createEmptyPostgresDatabase();
      const client = postgres(empty.databaseUrl, { max: 1, onnotice: () => {} });
      try {
        const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
        const at = migrations.findIndex((m) =>
          m.sql.join('\n').includes('DROP TABLE "memory_lifecycle_events"'),
        );
        expect(at).toBeGreaterThan(0);
        for (const migration of migrations.slice(0, at))
          for (const statement of migration.sql) await client.unsafe(statement);
        const [ws] = await client`insert into workspaces (name) values ('w') returning id`;
        const [memory] =
          await client`insert into memories (workspace_id, owner_id, text, content_hash)
          values (${ws!.id}, 'u', 'm', 'm') returning id`;
        const event = (kind: string, rule: string, at: string) =>
          client`insert into memory_lifecycle_events (workspace_id, memory_id, event, rule, created_at)
            values (${ws!.id}, ${memory!.id}, ${kind}, ${rule}, ${at})`;
        await event('archived', 'expiry', '2026-02-01T00:00:00Z');
        await event('merged', 'evolution', '2026-01-01T00:00:00Z');

        for (const statement of migrations[at]!.sql) await client.unsafe(statement);
        const rows = await client<{ kind: string; rule: string; memory_id: string }[]>`
          select kind, rule, memory_id from domain_events order by seq`;
        expect(rows).toEqual([
          { kind: 'merged', rule: 'evolution', memory_id: memory!.id },
          { kind: 'archived', rule: 'expiry', memory_id: memory!.id },
        ]);
        const [gone] = await client`select to_regclass('memory_lifecycle_events') as t`;
        expect(gone!.t).toBeNull();
      } finally {
        await client.end();
        await empty.drop();
      }
    },
  );

  it('the halfvec migration keeps stored embeddings, in half precision, searchable by their HNSW index', async () => {
    const empty = testBackend() === 'postgres' ? await createEmptyPostgresDatabase() : undefined;
    const handle = await openDatabase({
      ...(empty ? { databaseUrl: empty.databaseUrl } : {}),
      migrate: false,
    });
    try {
      const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
      const at = migrations.findIndex((m) => m.sql.join('\n').includes('SET DATA TYPE halfvec'));
      expect(at).toBeGreaterThan(0);
      const apply = async (migration: (typeof migrations)[number]) => {
        for (const statement of migration.sql) await handle.db.execute(sql.raw(statement));
      };
      for (const migration of migrations.slice(0, at)) await apply(migration);

      const vectorOf = (seed: number) =>
        Array.from({ length: 384 }, (_, i) => Math.sin(seed * 1.7 + i * 0.37) / 10);
      const [ws] = await executeRows<{ id: string }>(
        handle.db,
        sql`insert into workspaces (name) values ('w') returning id`,
      );
      const [memory] = await executeRows<{ id: string }>(
        handle.db,
        sql`insert into memories (workspace_id, owner_id, text, content_hash)
          values (${ws!.id}, 'u', 'm', 'm') returning id`,
      );
      for (const seed of [1, 2, 3])
        await handle.db.execute(sql`insert into memory_chunks (memory_id, workspace_id, owner_id,
            owner_type, chunk_index, text, embedding, embedding_dimension)
          values (${memory!.id}, ${ws!.id}, 'u', 'user', ${seed}, ${`chunk ${seed}`},
            ${`[${vectorOf(seed).join(',')}]`}::vector, 384)`);

      await apply(migrations[at]!);

      const rows = await executeRows<{ type: string; embedding: string; chunk_index: number }>(
        handle.db,
        sql`select pg_typeof(embedding)::text as type, embedding::text as embedding, chunk_index
          from memory_chunks order by chunk_index`,
      );
      expect(rows.map((r) => r.type)).toEqual(['halfvec', 'halfvec', 'halfvec']);
      for (const row of rows) {
        const stored = row.embedding.slice(1, -1).split(',').map(Number);
        const original = vectorOf(row.chunk_index);
        expect(stored).toHaveLength(384);
        // Half precision: 11 significant bits, so about 3 decimal digits of a value below 1.
        for (let i = 0; i < 384; i += 37) expect(stored[i]).toBeCloseTo(original[i]!, 3);
      }

      const distance = cosineDistanceTo(vectorOf(2));
      const nearest = handle.db
        .select({ chunkIndex: memoryChunks.chunkIndex, distance })
        .from(memoryChunks)
        .where(embeddingDimensionIs(384))
        .orderBy(distance)
        .limit(3);
      expect((await nearest)[0]?.chunkIndex).toBe(2);
      const plan = await handle.db.transaction(async (tx) => {
        await tx.execute(sql`set local enable_seqscan = off`);
        const lines = await executeRows(tx, sql`explain ${nearest}`);
        return lines.map((line) => String(Object.values(line)[0])).join('\n');
      });
      expect(plan).toContain('Index Scan using memory_chunks_embedding_384_hnsw');
    } finally {
      await handle.close();
      await empty?.drop();
    }
  });
});

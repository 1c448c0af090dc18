import { DatabaseError } from '../../src/errors.js';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRows, openDatabase } from '../../src/db/client.js';
import { DataDirInUseError } from '../../src/db/data-dir-lock.js';
import {
  insertApiKey,
  findActiveApiKeyByHash,
  touchApiKeyLastUsed,
} from '../../src/db/queries/api-keys.js';
import { insertAuditRecords, listAuditRecords } from '../../src/db/queries/audit.js';
import { getOrCreateSetting, getSetting } from '../../src/db/queries/settings.js';
import { cosineDistanceTo, embeddingDimensionIs } from '../../src/db/queries/vector.js';
import {
  countWorkspaces,
  createWorkspace,
  findFirstWorkspace,
  findWorkspaceByName,
  getWorkspaceById,
} from '../../src/db/queries/workspaces.js';
import {
  INDEXED_EMBEDDING_DIMENSIONS,
  apiKeys,
  memories,
  memoryChunks,
  memoryLinks,
} from '../../src/db/schema/index.js';
import { type TestDatabase, createTestDatabase, describeDb, testBackend } from '../support/db.js';

/** A deterministic unit-ish vector of `dimension` values, distinct per seed. */
function embedding(dimension: number, seed: number): number[] {
  return Array.from({ length: dimension }, (_, i) => Math.sin(seed * 7.3 + i * 0.11));
}

describeDb('storage layer', () => {
  let handle: TestDatabase;

  beforeAll(async () => {
    handle = await createTestDatabase();
  });
  afterAll(async () => {
    await handle?.close();
  });

  async function newWorkspace(name = 'acme') {
    return createWorkspace(handle.db, { name });
  }

  async function newMemory(workspaceId: string, text: string) {
    const [row] = await handle.db
      .insert(memories)
      .values({ workspaceId, ownerId: 'user-1', text, contentHash: `hash:${text}` })
      .returning();
    if (!row) throw new Error('no memory row');
    return row;
  }

  it('applies every migration, including pgvector and the partial HNSW indexes', async () => {
    await handle.ping();
    const rows = await handle.db
      .select({ name: sql<string>`indexname` })
      .from(sql`pg_indexes`)
      .where(sql`tablename = 'memory_chunks' and indexname like '%_hnsw'`);
    expect(rows.map((r) => r.name).sort()).toEqual(
      INDEXED_EMBEDDING_DIMENSIONS.map((n) => `memory_chunks_embedding_${n}_hnsw`).sort(),
    );
    const [ext] = await handle.db
      .select({ name: sql<string>`extname` })
      .from(sql`pg_extension`)
      .where(sql`extname = 'vector'`);
    expect(ext?.name).toBe('vector');
  });

  it('round-trips a workspace and an API key', async () => {
    const before = await countWorkspaces(handle.db);
    const workspace = await newWorkspace('round-trip');
    expect(workspace.plan).toBe('launch');
    expect(workspace.createdAt).toBeInstanceOf(Date);
    expect(await countWorkspaces(handle.db)).toBe(before + 1);
    expect(await getWorkspaceById(handle.db, workspace.id)).toEqual(workspace);
    expect((await findWorkspaceByName(handle.db, 'round-trip'))?.id).toBe(workspace.id);
    expect(await findFirstWorkspace(handle.db)).toBeDefined();

    const key = await insertApiKey(handle.db, {
      workspaceId: workspace.id,
      name: 'default',
      keyPrefix: 'mnemo_ab12',
      keyHash: 'hash-round-trip',
    });
    expect(key.lastUsedAt).toBeNull();
    const found = await findActiveApiKeyByHash(handle.db, 'hash-round-trip');
    expect(found?.id).toBe(key.id);
    expect(found?.workspaceId).toBe(workspace.id);

    await touchApiKeyLastUsed(handle.db, key.id);
    expect((await findActiveApiKeyByHash(handle.db, 'hash-round-trip'))?.lastUsedAt).toBeInstanceOf(
      Date,
    );
  });

  it('finds the oldest workspace first and by name', async () => {
    const first = await findFirstWorkspace(handle.db);
    const all = await Promise.all([newWorkspace('later-a'), newWorkspace('later-b')]);
    expect((await findFirstWorkspace(handle.db))?.id).toBe(first?.id);
    expect(all.map((w) => w.id)).not.toContain(first?.id);
    expect(await findWorkspaceByName(handle.db, 'no-such-workspace')).toBeUndefined();
    expect(
      await getWorkspaceById(handle.db, '00000000-0000-0000-0000-000000000000'),
    ).toBeUndefined();
  });

  it('ignores revoked API keys and keeps key hashes unique', async () => {
    const workspace = await newWorkspace();
    const key = await insertApiKey(handle.db, {
      workspaceId: workspace.id,
      name: 'old',
      keyPrefix: 'mnemo_zz99',
      keyHash: 'hash-revoked',
    });
    await handle.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, key.id));
    expect(await findActiveApiKeyByHash(handle.db, 'hash-revoked')).toBeUndefined();
    expect(await findActiveApiKeyByHash(handle.db, 'hash-never-issued')).toBeUndefined();
    await expect(
      insertApiKey(handle.db, {
        workspaceId: workspace.id,
        name: 'dup',
        keyPrefix: 'x',
        keyHash: 'hash-revoked',
      }),
    ).rejects.toThrow();
  });

  it('getOrCreateSetting keeps the first value, also under concurrent callers', async () => {
    expect(await getSetting(handle.db, 'api_key_salt')).toBeUndefined();
    const first = await getOrCreateSetting(handle.db, 'api_key_salt', () => 'salt-1');
    const second = await getOrCreateSetting(handle.db, 'api_key_salt', () => 'salt-2');
    expect(first).toBe('salt-1');
    expect(second).toBe('salt-1');

    let made = 0;
    const racers = await Promise.all(
      Array.from({ length: 5 }, () =>
        getOrCreateSetting(handle.db, 'race', () => `value-${made++}`),
      ),
    );
    expect(new Set(racers).size).toBe(1);
  });

  it('writes and lists audit records newest first, filtered by workspace and request id', async () => {
    const workspace = await newWorkspace('audited');
    await insertAuditRecords(
      handle.db,
      ['req-1', 'req-2', 'req-3'].map((requestId, i) => ({
        requestId,
        workspaceId: workspace.id,
        method: 'POST',
        path: '/v1/memories',
        status: 200,
        durationMs: 5 + i,
        createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)),
      })),
    );
    await insertAuditRecords(handle.db, [
      { requestId: 'req-x', method: 'GET', path: '/healthz', status: 200, durationMs: 1 },
    ]);

    const listed = await listAuditRecords(handle.db, { workspaceId: workspace.id });
    expect(listed.map((r) => r.requestId)).toEqual(['req-3', 'req-2', 'req-1']);
    expect(await listAuditRecords(handle.db, { workspaceId: workspace.id, limit: 2 })).toHaveLength(
      2,
    );
    const byRequest = await listAuditRecords(handle.db, { requestId: 'req-x' });
    expect(byRequest).toHaveLength(1);
    expect(byRequest[0]?.workspaceId).toBeNull();
  });

  describe('memories and chunks', () => {
    it('stores chunks of several dimensions, fills tsv and searches by keyword and by vector', async () => {
      const workspace = await newWorkspace();
      const memory = await newMemory(
        workspace.id,
        'The user prefers dark roast coffee. They live in Lisbon.',
      );
      expect(memory.metadata).toEqual({});
      expect(memory.lifecycleState).toBe('active');

      const e384 = embedding(384, 1);
      const e1536 = embedding(1536, 2);
      await handle.db.insert(memoryChunks).values([
        {
          memoryId: memory.id,
          workspaceId: workspace.id,
          ownerId: memory.ownerId,
          ownerType: memory.ownerType,
          chunkIndex: 0,
          text: 'The user prefers dark roast coffee.',
          embedding: e384,
          embeddingProvider: 'local',
          embeddingDimension: 384,
          embeddingVersion: 'v1',
        },
        {
          memoryId: memory.id,
          workspaceId: workspace.id,
          ownerId: memory.ownerId,
          ownerType: memory.ownerType,
          chunkIndex: 1,
          text: 'They live in Lisbon.',
          embedding: e1536,
          embeddingProvider: 'openai',
          embeddingDimension: 1536,
          embeddingVersion: 'text-embedding-3-small',
        },
      ]);

      const chunks = await handle.db
        .select()
        .from(memoryChunks)
        .where(eq(memoryChunks.memoryId, memory.id))
        .orderBy(memoryChunks.chunkIndex);
      expect(chunks).toHaveLength(2);
      expect(chunks[0]?.tsv).toContain('coffe');
      expect(chunks[0]?.embedding).toHaveLength(384);
      // Stored in half precision (halfvec): about 3 decimal digits of a value below 1.
      expect(chunks[0]?.embedding?.[5]).toBeCloseTo(e384[5] ?? NaN, 3);
      expect(chunks[1]?.embedding).toHaveLength(1536);

      const keywordHits = await handle.db
        .select({ id: memoryChunks.id, chunkIndex: memoryChunks.chunkIndex })
        .from(memoryChunks)
        .where(
          and(
            eq(memoryChunks.workspaceId, workspace.id),
            sql`${memoryChunks.tsv} @@ plainto_tsquery('english', ${'roasted coffees'})`,
          ),
        );
      expect(keywordHits.map((h) => h.chunkIndex)).toEqual([0]);

      const distance = cosineDistanceTo(embedding(384, 1.01));
      const vectorHits = await handle.db
        .select({
          chunkIndex: memoryChunks.chunkIndex,
          dimension: memoryChunks.embeddingDimension,
          distance,
        })
        .from(memoryChunks)
        .where(and(eq(memoryChunks.workspaceId, workspace.id), embeddingDimensionIs(384)))
        .orderBy(distance)
        .limit(10);
      expect(vectorHits).toHaveLength(1);
      expect(vectorHits[0]?.dimension).toBe(384);
      expect(vectorHits[0]?.chunkIndex).toBe(0);
      expect(vectorHits[0]?.distance).toBeTypeOf('number');
      expect(vectorHits[0]?.distance).toBeLessThan(0.05);
    });

    it('lets the 384-d cosine query use its partial HNSW index', async () => {
      const distance = cosineDistanceTo(embedding(384, 3));
      const search = handle.db
        .select({ id: memoryChunks.id, distance })
        .from(memoryChunks)
        .where(embeddingDimensionIs(384))
        .orderBy(distance)
        .limit(5);
      const plan = await handle.db.transaction(async (tx) => {
        // Tiny tables favour a sequential scan; the question is only whether the index qualifies.
        await tx.execute(sql`set local enable_seqscan = off`);
        const rows = await executeRows(tx, sql`explain ${search}`);
        return rows.map((row) => String(Object.values(row)[0])).join('\n');
      });
      expect(plan).toContain('Index Scan using memory_chunks_embedding_384_hnsw');
    });

    it('rejects invalid embedding dimensions before they reach SQL', () => {
      expect(() => embeddingDimensionIs(0)).toThrow(DatabaseError);
      expect(() => embeddingDimensionIs(384.5)).toThrow(DatabaseError);
      expect(() => cosineDistanceTo([])).toThrow(DatabaseError);
    });

    it('enforces one link per (workspace, source, target, relation)', async () => {
      const workspace = await newWorkspace();
      const a = await newMemory(workspace.id, 'a');
      const b = await newMemory(workspace.id, 'b');
      const link = { workspaceId: workspace.id, sourceMemoryId: a.id, targetMemoryId: b.id };
      await handle.db.insert(memoryLinks).values(link);
      await expect(handle.db.insert(memoryLinks).values(link)).rejects.toThrow();
      await handle.db.insert(memoryLinks).values({ ...link, relation: 'supports' });
      expect(await handle.db.$count(memoryLinks, eq(memoryLinks.sourceMemoryId, a.id))).toBe(2);
    });

    it('deleting a memory cascades to its chunks, links and extraction children', async () => {
      const workspace = await newWorkspace();
      const parent = await newMemory(workspace.id, 'parent');
      const other = await newMemory(workspace.id, 'other');
      const [child] = await handle.db
        .insert(memories)
        .values({
          workspaceId: workspace.id,
          ownerId: 'user-1',
          text: 'child',
          contentHash: 'c',
          parentMemoryId: parent.id,
        })
        .returning();
      await handle.db
        .update(memories)
        .set({ replacedByMemoryId: parent.id, lifecycleState: 'replaced' })
        .where(eq(memories.id, other.id));
      await handle.db.insert(memoryChunks).values({
        memoryId: parent.id,
        workspaceId: workspace.id,
        ownerId: 'user-1',
        ownerType: 'user',
        chunkIndex: 0,
        text: 'parent',
      });
      await handle.db.insert(memoryLinks).values([
        { workspaceId: workspace.id, sourceMemoryId: parent.id, targetMemoryId: other.id },
        { workspaceId: workspace.id, sourceMemoryId: other.id, targetMemoryId: parent.id },
      ]);

      await handle.db.delete(memories).where(eq(memories.id, parent.id));

      expect(await handle.db.$count(memoryChunks, eq(memoryChunks.memoryId, parent.id))).toBe(0);
      expect(await handle.db.$count(memoryLinks, eq(memoryLinks.workspaceId, workspace.id))).toBe(
        0,
      );
      expect(await handle.db.$count(memories, eq(memories.id, child?.id ?? ''))).toBe(0);
      const [survivor] = await handle.db.select().from(memories).where(eq(memories.id, other.id));
      expect(survivor?.replacedByMemoryId).toBeNull();
    });

    it('rejects a second memory with the same idempotency key in a workspace only', async () => {
      const w1 = await newWorkspace();
      const w2 = await newWorkspace();
      const values = { ownerId: 'u', text: 't', contentHash: 'h', idempotencyKey: 'idem-key-1' };
      await handle.db.insert(memories).values({ ...values, workspaceId: w1.id });
      await handle.db.insert(memories).values({ ...values, workspaceId: w2.id });
      await expect(
        handle.db.insert(memories).values({ ...values, workspaceId: w1.id }),
      ).rejects.toThrow();
      // Without a key there is no constraint.
      await handle.db
        .insert(memories)
        .values({ ...values, idempotencyKey: null, workspaceId: w1.id });
      await handle.db
        .insert(memories)
        .values({ ...values, idempotencyKey: null, workspaceId: w1.id });
    });
  });
});

describe.runIf(testBackend() === 'pglite')('PGlite persistence [pglite]', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'mnemo-pglite-')), 'nested', 'data');
  });
  afterAll(async () => {
    if (dataDir) await rm(join(dataDir, '..', '..'), { recursive: true, force: true });
  });

  it('keeps data in dataDir across close and reopen', async () => {
    const first = await openDatabase({ dataDir });
    const workspace = await createWorkspace(first.db, { name: 'persisted' });
    const salt = await getOrCreateSetting(first.db, 'api_key_salt', () => 'persisted-salt');
    await first.close();

    const second = await openDatabase({ dataDir });
    try {
      expect((await getWorkspaceById(second.db, workspace.id))?.name).toBe('persisted');
      expect(await getOrCreateSetting(second.db, 'api_key_salt', () => 'other')).toBe(salt);
    } finally {
      await second.close();
    }
  });

  it('refuses a second open of a data folder in use, and takes over a stale lock', async () => {
    const first = await openDatabase({ dataDir });
    try {
      await expect(openDatabase({ dataDir })).rejects.toThrow(DataDirInUseError);
    } finally {
      await first.close();
    }
    // Another live process (our parent) holds it: refused with a message naming it.
    await writeFile(join(dataDir, 'mnemo.pid'), String(process.ppid));
    await expect(openDatabase({ dataDir })).rejects.toThrow(`in use by process ${process.ppid}`);
    // A pid that no longer runs: the lock is stale and taken over.
    await writeFile(join(dataDir, 'mnemo.pid'), '2147483646');
    const reopened = await openDatabase({ dataDir });
    expect(await readFile(join(dataDir, 'mnemo.pid'), 'utf8')).toBe(String(process.pid));
    await reopened.close();
    await expect(readFile(join(dataDir, 'mnemo.pid'), 'utf8')).rejects.toThrow();
  });
});

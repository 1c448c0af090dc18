import { and, eq, sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executeRows } from '../../src/db/client.js';
import {
  maintainOwnerIndexes,
  ownerKeywordIndexName,
  ownerVectorIndexName,
} from '../../src/db/queries/owner-indexes.js';
import { keywordRecallQuery, vectorRecallQuery } from '../../src/db/queries/recall.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { memories, memoryChunks } from '../../src/db/schema/index.js';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { eraseOwner } from '../../src/services/owner-data/erase.js';
import { createTestDatabase, describeDb, testBackend, type TestDatabase } from '../support/db.js';

const POLICY = { minChunks: 200, maxShare: 0.25 };
const LARGE = 300;
const embedder = new LocalEmbeddingProvider();

describeDb('indexes of large owners', () => {
  let db: TestDatabase;
  let workspaceId: string;
  const owner = (ownerId: string) => ({ workspaceId, ownerType: 'user', ownerId });

  async function write(ownerId: string, count: number): Promise<void> {
    const rows = Array.from({ length: count }, (_, i) => ({
      id: crypto.randomUUID(),
      text: `${ownerId} note ${i} about ${['coffee', 'hiking', 'music', 'travel'][i % 4]}`,
    }));
    await db.db
      .insert(memories)
      .values(
        rows.map((row) => ({ ...owner(ownerId), id: row.id, text: row.text, contentHash: row.id })),
      );
    await db.db.insert(memoryChunks).values(
      rows.map((row) => ({
        ...owner(ownerId),
        memoryId: row.id,
        chunkIndex: 0,
        text: row.text,
        embedding: embedder.embedOne(row.text),
        embeddingProvider: 'local',
        embeddingDimension: 256,
        embeddingVersion: embedder.version,
      })),
    );
  }
  const indexes = async () =>
    (
      await executeRows<{ name: string }>(
        db.db,
        sql`select relname as name from pg_class where relkind = 'i' and relname like 'memory_chunks_owner_%' order by 1`,
      )
    ).map((row) => row.name);
  const explain = async (query: SQL) => {
    const rows = await executeRows<Record<string, string>>(db.db, sql`explain ${query}`);
    return rows.map((row) => Object.values(row)[0]).join('\n');
  };
  const planOf = (ownerId: string) =>
    explain(vectorRecallQuery(db.db, owner(ownerId), embedder.embedOne('coffee'), 50).getSQL());
  // The keyword statement reads the indexes for owners above the scanned size only: these owners
  // are made to count as large.
  const keywordPlanOf = (ownerId: string) =>
    explain(
      keywordRecallQuery(db.db, owner(ownerId), 'coffee hiking', 50, {
        scannedOwnerChunks: 100,
      }).getSQL(),
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    workspaceId = (await createWorkspace(db.db, { name: 'owner-indexes' })).id;
    await write('big', LARGE);
    await write("o'big", LARGE);
    for (let i = 0; i < 8; i += 1) await write(`small-${i}`, 150);
    await db.db.execute(sql`analyze`);
  }, 300_000);
  afterAll(async () => db?.close());

  it.runIf(testBackend() === 'pglite')('PGlite: no owner gets an index of its own', async () => {
    expect(await maintainOwnerIndexes(db.db, POLICY)).toEqual({ created: [], dropped: [] });
    expect(await indexes()).toEqual([]);
  });

  it.runIf(testBackend() === 'postgres')(
    'large owners under the share get one, their searches read it; erasure and shrinking drop it',
    async () => {
      const big = ownerVectorIndexName(owner('big'), 256);
      const quoted = ownerVectorIndexName(owner("o'big"), 256);
      const bigWords = ownerKeywordIndexName(owner('big'));
      const quotedWords = ownerKeywordIndexName(owner("o'big"));
      const all = [big, quoted, bigWords, quotedWords].sort();
      // The small owners hold 150 chunks each: past the threshold's half (kept), short of it (not built).
      const changes = await maintainOwnerIndexes(db.db, POLICY);
      expect(changes.created.sort()).toEqual(all);
      expect(await indexes()).toEqual(all);
      expect(await planOf('big')).toContain(big);
      expect(await planOf("o'big")).toContain(quoted);
      expect(await planOf('small-1')).not.toMatch(/memory_chunks_owner_/);
      expect(await keywordPlanOf('big')).toContain(bigWords);
      expect(await keywordPlanOf("o'big")).toContain(quotedWords);
      expect(await keywordPlanOf('small-1')).not.toMatch(/memory_chunks_owner_/);
      // Nothing to do the second time.
      expect(await maintainOwnerIndexes(db.db, POLICY)).toEqual({ created: [], dropped: [] });
      // Other indexes of the table are not its own to drop (the keyword index among them).
      const [keyword] = await executeRows<{ n: number }>(
        db.db,
        sql`select count(*)::int as n from pg_class where relname = 'memory_chunks_keyword_owner_gin'`,
      );
      expect(keyword!.n).toBe(1);

      // Erasure drops the erased owner's index at once (its predicate names the owner).
      await eraseOwner(db.db, workspaceId, { ownerId: 'big', ownerType: 'user' });
      expect(await indexes()).toEqual([quoted, quotedWords].sort());

      // An owner that shrank below half the threshold loses its index at the next run.
      await db.db
        .delete(memories)
        .where(and(eq(memories.workspaceId, workspaceId), eq(memories.ownerId, "o'big")));
      const shrank = await maintainOwnerIndexes(db.db, POLICY);
      expect(shrank.created).toEqual([]);
      expect(shrank.dropped.sort()).toEqual([quoted, quotedWords].sort());
      expect(await indexes()).toEqual([]);
    },
    60_000,
  );
});

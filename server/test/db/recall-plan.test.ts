import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executeRows } from '../../src/db/client.js';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import {
  keywordRecall,
  keywordRecallQuery,
  recallRows,
  SCANNED_OWNER_CHUNKS,
  vectorRecall,
  vectorRecallQuery,
  type RecallFilter,
} from '../../src/db/queries/recall.js';
import { episodeNeighbours } from '../../src/db/queries/episodes.js';
import {
  searchRecall,
  searchRecallQuery,
  searchRecallStatement,
  type SearchRecallRequest,
} from '../../src/db/queries/search-recall.js';
import { PgDialect } from 'drizzle-orm/pg-core';
import * as schema from '../../src/db/schema/index.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { memories, memoryChunks } from '../../src/db/schema/index.js';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { createTestDatabase, describeDb, testBackend, type TestDatabase } from '../support/db.js';
import { adminDatabaseUrl, databaseUrlFor } from '../support/postgres.js';

const OWNERS = 40;
const MEMORIES_PER_OWNER = 50;
const FILLER_MEMORIES = 30_000;
const TOPICS = [
  'coffee',
  'hiking',
  'invoice',
  'flight',
  'allergy',
  'piano',
  'garden',
  'salary',
  'doctor',
  'birthday',
];

describeDb('per-owner recall query plans', () => {
  let db: TestDatabase;
  let filter: RecallFilter;
  beforeAll(async () => {
    db = await createTestDatabase();
    const workspace = await createWorkspace(db.db, { name: 'plans' });
    const embedder = new LocalEmbeddingProvider();
    for (let owner = 0; owner < OWNERS; owner += 1) {
      const rows = Array.from({ length: MEMORIES_PER_OWNER }, (_, i) => {
        const text = `Owner ${owner} note ${i} about ${TOPICS[i % TOPICS.length]} and ${TOPICS[(i * 7 + owner) % TOPICS.length]}`;
        return { id: crypto.randomUUID(), text };
      });
      await db.db.insert(memories).values(
        rows.map((row) => ({
          id: row.id,
          workspaceId: workspace.id,
          ownerId: `owner-${owner}`,
          ownerType: 'user',
          text: row.text,
          contentHash: row.id,
        })),
      );
      await db.db.insert(memoryChunks).values(
        rows.map((row) => ({
          memoryId: row.id,
          workspaceId: workspace.id,
          ownerId: `owner-${owner}`,
          ownerType: 'user',
          chunkIndex: 0,
          text: row.text,
          embedding: embedder.embedOne(row.text),
          embeddingProvider: 'local',
          embeddingDimension: 256,
          embeddingVersion: embedder.version,
        })),
      );
    }
    // Many more memories of other owners in the same workspace (no embeddings needed): a plan
    // that scans the workspace would read all of them.
    // Two statements with an analyze between: each chunk's foreign-key check is planned from
    // the statistics of `memories`, and without them it may scan the table once per chunk.
    // Bulk setup, not the subject: no statement timeout (a loaded machine may need longer).
    await db.db.transaction(async (tx) => {
      await tx.execute(sql`set local statement_timeout = 0`);
      await tx.execute(sql`
        insert into memories (workspace_id, owner_id, owner_type, text, content_hash)
        select ${workspace.id}::uuid, 'filler-' || (g % 500), 'user', 'filler memory ' || g, md5(g::text)
        from generate_series(1, ${FILLER_MEMORIES}) g`);
      await tx.execute(sql`analyze memories`);
      await tx.execute(sql`
        insert into memory_chunks (memory_id, workspace_id, owner_id, owner_type, chunk_index, text)
        select id, workspace_id, owner_id, owner_type, 0, text from memories
        where workspace_id = ${workspace.id}::uuid and owner_id like 'filler-%'`);
    });
    await db.db.execute(sql`analyze`);
    filter = { workspaceId: workspace.id, ownerId: 'owner-7', ownerType: 'user' };
  }, 120_000);
  afterAll(async () => db?.close());

  async function plan(query: { getSQL(): ReturnType<typeof sql> }): Promise<string> {
    const rows = await executeRows<Record<string, string>>(db.db, sql`explain ${query.getSQL()}`);
    return rows.map((row) => Object.values(row)[0]).join('\n');
  }

  /** Current truth only, and with history (expired memories too), as every search reads. */
  const filters = () => [filter, { ...filter, history: true }];

  it('vector recall for one owner uses indexes, never a sequential scan of chunks or memories', async () => {
    const embedding = new LocalEmbeddingProvider().embedOne('coffee and hiking');
    for (const f of filters()) {
      const text = await plan(vectorRecallQuery(db.db, f, embedding, 50));
      if (process.env.SHOW_PLANS) console.log(text);
      expect(text).not.toMatch(/Seq Scan on (memory_chunks|memories)/);
      expect(text).toMatch(/Index Scan|Bitmap Index Scan|Index Only Scan/);
      expect(text).toMatch(/memory_chunks_(workspace_owner_idx|embedding_256_hnsw)/);
    }
  });

  it('keyword recall for one owner uses indexes, never a sequential scan of chunks or memories', async () => {
    for (const f of filters()) {
      const text = await plan({
        getSQL: () => keywordRecallQuery(db.db, f, 'coffee hiking', 50),
      });
      if (process.env.SHOW_PLANS) console.log(text);
      expect(text).not.toMatch(/Seq Scan on (memory_chunks|memories)/);
      expect(text).toMatch(/memory_chunks_(workspace_owner_idx|keyword_owner_gin)/);
    }
  });

  it('keyword recall ranks by BM25 over the owner only, in one statement', async () => {
    const hits = await keywordRecall(db.db, filter, 'coffee hiking', 50);
    expect(hits.length).toBeGreaterThan(0);
    expect(
      hits.every((hit) => /coffee|hiking/.test(hit.text) && hit.text.startsWith('Owner 7 ')),
    ).toBe(true);
    // Chunks holding both words come first, with full coverage; scores are relative to the best.
    const both = hits.filter((hit) => hit.text.includes('coffee') && hit.text.includes('hiking'));
    expect(hits.slice(0, both.length)).toEqual(both);
    expect(both.every((hit) => hit.coverage === 1)).toBe(true);
    expect(hits[0]?.score).toBe(1);
    expect(hits.every((hit, i) => i === 0 || hit.score <= hits[i - 1]!.score)).toBe(true);
    expect(await keywordRecall(db.db, filter, 'the and of', 50)).toEqual([]);
  });

  it('the one-statement search recall returns what the separate statements return', async () => {
    const embedder = new LocalEmbeddingProvider();
    for (const query of ['coffee and hiking', 'a flight for the birthday', 'the and of']) {
      const embedding = embedder.embedOne(query);
      const episodes = { windowSeconds: 1800, span: 2, seedsPerRecall: 5 };
      const one = await searchRecall(db.db, filter, { embedding, query, limit: 50, episodes });
      const vector = await vectorRecall(db.db, filter, embedding, 50);
      const text = await keywordRecall(db.db, filter, query, 50);
      expect(one.vector).toEqual(vector);
      expect(one.text).toEqual(text);
      // Neighbours of the memories of each recall's first five chunks, in any order.
      const seeds = [
        ...new Set([...vector.slice(0, 5), ...text.slice(0, 5)].map((hit) => hit.memoryId)),
      ];
      expect([...(one.neighbours?.seeds ?? [])].sort()).toEqual([...seeds].sort());
      const separate = await episodeNeighbours(db.db, filter, seeds, 1800, 2);
      const key = (n: { seedMemoryId: string; memoryId: string; step: number }) =>
        `${n.seedMemoryId} ${n.memoryId} ${n.step}`;
      const sorted = <T extends { seedMemoryId: string; memoryId: string; step: number }>(
        list: T[],
      ) => [...list].sort((a, b) => key(a).localeCompare(key(b)));
      expect(sorted(one.neighbours?.rows ?? [])).toEqual(sorted(separate));
      if (seeds.length > 0) expect(one.neighbours?.rows.length).toBeGreaterThan(0);
      // Each part alone, as vector and keyword modes ask.
      expect(await searchRecall(db.db, filter, { embedding, limit: 50 })).toEqual({
        vector,
        text: [],
        neighbours: undefined,
      });
      expect(await searchRecall(db.db, filter, { query, limit: 50 })).toEqual({
        vector: [],
        text,
        neighbours: undefined,
      });
    }
  });

  it('the one-statement search recall, built once per shape, fills in each request’s values', () => {
    const dialect = new PgDialect();
    const embedder = new LocalEmbeddingProvider();
    const filters: RecallFilter[] = [
      filter,
      { ...filter, ownerId: 'owner-8', scope: 'work', namespace: 'n1' },
      { ...filter, containerTag: 'tag', memoryTypes: ['fact'] },
      { ...filter, memoryTypes: ['fact', 'event'] },
      { ...filter, memoryTypes: ['event', 'task'], scope: '' },
      { ...filter, metadata: { speaker: 'Ana' }, metadataMode: 'or' },
      { ...filter, effectiveFrom: new Date('2024-01-01'), effectiveTo: new Date('2025-01-01') },
      // History (every search's default) reads archived memories too: a shape of its own.
      { ...filter, history: true },
      { ...filter, history: true, scope: 'work', memoryTypes: ['fact'] },
    ];
    const requests: SearchRecallRequest[] = ['coffee and hiking', "O'Brien's flight"].flatMap(
      (query) => [
        { embedding: embedder.embedOne(query), query, limit: 50 },
        { embedding: embedder.embedOne(query), limit: 30 },
        { query, limit: 150 },
        {
          embedding: embedder.embedOne(query),
          query,
          limit: 50,
          episodes: { windowSeconds: 1800, span: 2, seedsPerRecall: 20 },
        },
        { query, limit: 50, episodes: { windowSeconds: 60, span: 2, seedsPerRecall: 40 } },
      ],
    );
    // Twice: the first pass learns each shape, the second fills it in.
    for (let pass = 0; pass < 2; pass += 1)
      for (const f of filters)
        for (const request of requests) {
          const built = dialect.sqlToQuery(searchRecallQuery(db.db, f, request)!);
          const cached = searchRecallStatement(db.db, f, request);
          expect({ sql: cached?.sql, params: cached?.params }).toEqual({
            sql: built.sql,
            params: built.params,
          });
        }
    expect(searchRecallStatement(db.db, filter, { limit: 50 })).toBeUndefined();
  });

  /**
   * Whether each index, and each table by its alias, was read, from EXPLAIN (ANALYZE, FORMAT
   * JSON).
   */
  async function executedIndexes(query: ReturnType<typeof sql>): Promise<Map<string, boolean>> {
    const [row] = await executeRows<Record<string, unknown>>(
      db.db,
      sql`explain (analyze, format json) ${query}`,
    );
    const raw = Object.values(row!)[0];
    const [top] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
    const seen = new Map<string, boolean>();
    const walk = (node: PlanNode) => {
      for (const name of [node['Index Name'], node.Alias])
        if (name) seen.set(name, (seen.get(name) ?? false) || node['Actual Loops'] > 0);
      node.Plans?.forEach(walk);
    };
    walk(top.Plan);
    return seen;
  }
  interface PlanNode {
    'Index Name'?: string;
    Alias?: string;
    'Actual Loops': number;
    Plans?: PlanNode[];
  }

  it('small owners are read by a scan of their own chunks in both recalls, large ones through the indexes, with the same rows', async () => {
    const embedding = new LocalEmbeddingProvider().embedOne('coffee and hiking');
    // owner-7 holds 50 chunks: at or below SCANNED_OWNER_CHUNKS.
    expect(MEMORIES_PER_OWNER).toBeLessThanOrEqual(SCANNED_OWNER_CHUNKS);
    const keyword = (scannedOwnerChunks: number) =>
      keywordRecallQuery(db.db, filter, 'coffee hiking', 50, { scannedOwnerChunks });
    const vector = (scannedOwnerChunks: number) =>
      vectorRecallQuery(db.db, filter, embedding, 50, { scannedOwnerChunks });
    const scannedKeyword = await executedIndexes(keyword(SCANNED_OWNER_CHUNKS));
    expect(scannedKeyword.get('scanned_chunks')).toBe(true);
    expect(scannedKeyword.get('memory_chunks_keyword_owner_gin') ?? false).toBe(false);
    // Taken as a large owner (scanning up to 0 chunks): the planner's read (for 50 chunks it may
    // still be the owner index), not the scan.
    const indexedKeyword = await executedIndexes(keyword(0));
    expect(indexedKeyword.get('scanned_chunks')).toBe(false);
    expect(await recallRows(db.db, keyword(0))).toEqual(
      await recallRows(db.db, keyword(SCANNED_OWNER_CHUNKS)),
    );
    // Vector recall: the scan reads each memory only in distance order, as far as the limit.
    const scannedVector = await executedIndexes(vector(SCANNED_OWNER_CHUNKS));
    expect(scannedVector.get('scanned_chunks')).toBe(true);
    expect(scannedVector.get('memory_chunks_embedding_256_hnsw') ?? false).toBe(false);
    expect((await executedIndexes(vector(0))).get('scanned_chunks')).toBe(false);
    const nearest = await recallRows<{ id: string; distance: number | string }>(
      db.db,
      vector(SCANNED_OWNER_CHUNKS),
    );
    expect(nearest).toHaveLength(MEMORIES_PER_OWNER);
    const distances = nearest.map((row) => Number(row.distance));
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    const limited = await recallRows<{ id: string }>(
      db.db,
      vectorRecallQuery(db.db, filter, embedding, 5),
    );
    expect(limited.map((row) => row.id)).toEqual(nearest.slice(0, 5).map((row) => row.id));
  });

  it('the one-statement search recall uses indexes, never a sequential scan of chunks or memories', async () => {
    const embedding = new LocalEmbeddingProvider().embedOne('coffee and hiking');
    for (const f of filters()) {
      const text = await plan({
        getSQL: () =>
          searchRecallQuery(db.db, f, {
            embedding,
            query: 'coffee hiking',
            limit: 50,
            episodes: { windowSeconds: 1800, span: 2, seedsPerRecall: 20 },
          })!,
      });
      if (process.env.SHOW_PLANS) console.log(text);
      expect(text).not.toMatch(/Seq Scan on (memory_chunks|memories)/);
      expect(text).toMatch(/memory_chunks_(workspace_owner_idx|embedding_256_hnsw)/);
      expect(text).toMatch(/memories_workspace_owner_created_id_idx/);
    }
  });

  it.runIf(testBackend() === 'postgres')(
    'recall runs prepared when the sessions plan for each execution, with the same results',
    async () => {
      const [row] = await executeRows<{ name: string }>(
        db.db,
        sql`select current_database() as name`,
      );
      const client = postgres(databaseUrlFor(adminDatabaseUrl(), row!.name), {
        max: 1,
        onnotice: () => {},
        connection: {
          'hnsw.iterative_scan': 'relaxed_order',
          plan_cache_mode: 'force_custom_plan',
        },
      });
      try {
        const custom = drizzle({ client, schema });
        const embedding = new LocalEmbeddingProvider().embedOne('coffee and hiking');
        // Past the five runs after which a prepared statement may get a generic plan.
        for (let run = 0; run < 7; run += 1) {
          expect(await keywordRecall(custom, filter, 'coffee hiking', 50)).toEqual(
            await keywordRecall(db.db, filter, 'coffee hiking', 50),
          );
          expect(await vectorRecall(custom, filter, embedding, 50)).toEqual(
            await vectorRecall(db.db, filter, embedding, 50),
          );
        }
        const statements = await client<
          { count: string }[]
        >`select count(*)::text as count from pg_prepared_statements`;
        expect(Number(statements[0]?.count)).toBeGreaterThanOrEqual(2);
      } finally {
        await client.end({ timeout: 5 });
      }
    },
  );
});

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { statementPoolOf, type Database } from '../../src/db/client.js';
import {
  exactVectorRecallQuery,
  keywordRecall,
  recalled,
  recallRows,
  vectorRecall,
  type MemoryColumns,
  type RecallFilter,
} from '../../src/db/queries/recall.js';
import {
  SMALL_OWNER_CHUNKS,
  searchPlanFor,
  searchRecall,
  type SearchRecallRequest,
} from '../../src/db/queries/search-recall.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { memories, memoryChunks } from '../../src/db/schema/index.js';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { createTestDatabase, describeDb, testBackend, type TestDatabase } from '../support/db.js';

const TOPICS = ['coffee', 'hiking', 'invoice', 'flight', 'allergy', 'piano', 'garden', 'doctor'];
const embedder = new LocalEmbeddingProvider();

async function addMemories(
  db: Database,
  workspaceId: string,
  ownerId: string,
  count: number,
  from = 0,
): Promise<void> {
  const rows = Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const text = `${ownerId} note ${i} about ${TOPICS[i % TOPICS.length]} and ${TOPICS[(i * 3 + 1) % TOPICS.length]}`;
    return { id: crypto.randomUUID(), text, type: i % 3 === 0 ? 'fact' : 'event' };
  });
  const owner = { workspaceId, ownerId, ownerType: 'user' };
  await db.insert(memories).values(
    rows.map((row, k) => ({
      ...owner,
      id: row.id,
      text: row.text,
      memoryType: row.type,
      contentHash: row.id,
      // Minutes apart: episode neighbours exist.
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, from + k)),
    })),
  );
  await db.insert(memoryChunks).values(
    rows.map((row) => ({
      ...owner,
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

/** Many owners of a few chunks each (no embeddings needed): the owner a generic plan expects. */
async function addOtherOwners(
  db: Database,
  workspaceId: string,
  owners: number,
  each: number,
): Promise<void> {
  await db.execute(sql`
    with other as (
      insert into memories (workspace_id, owner_id, owner_type, text, content_hash)
      select ${workspaceId}::uuid, 'other-' || (g % ${owners}), 'user', 'other memory ' || g, md5(g::text)
      from generate_series(1, ${owners * each}) g
      returning id, owner_id, text
    )
    insert into memory_chunks (memory_id, workspace_id, owner_id, owner_type, chunk_index, text)
    select id, ${workspaceId}::uuid, owner_id, 'user', 0, text from other`);
}

const requests = (query: string): SearchRecallRequest[] => {
  const embedding = embedder.embedOne(query);
  const episodes = { windowSeconds: 1800, span: 2, seedsPerRecall: 5 };
  return [
    { embedding, query, limit: 50, episodes },
    { embedding, query, limit: 30 },
    { embedding, limit: 50 },
    { query, limit: 150, episodes },
  ];
};

/** Which pool ran each search statement, while `fn` runs. */
async function poolsOf(db: Database, fn: () => Promise<void>): Promise<string[]> {
  const ran: string[] = [];
  const spies = [
    ['main', db],
    ['statement', statementPoolOf(db)?.db],
  ].flatMap(([name, pool]) => {
    if (!pool || typeof pool === 'string') return [];
    const session = pool._.session;
    const prepare = session.prepareQuery.bind(session);
    return [
      vi.spyOn(session, 'prepareQuery').mockImplementation((query, ...rest) => {
        if (/vector_hits|keyword_hits/.test(query.sql)) ran.push(name as string);
        return prepare(query, ...rest);
      }),
    ];
  });
  try {
    await fn();
  } finally {
    spies.forEach((spy) => spy.mockRestore());
  }
  return ran;
}

describeDb('search plans by owner size', () => {
  let db: TestDatabase;
  let small: RecallFilter;
  let large: RecallFilter;
  beforeAll(async () => {
    db = await createTestDatabase();
    const workspace = await createWorkspace(db.db, { name: 'plans' });
    await addMemories(db.db, workspace.id, 'small', 12);
    // PGlite plans every search as before: its test needs no large owner.
    if (testBackend() === 'postgres')
      await addMemories(db.db, workspace.id, 'large', SMALL_OWNER_CHUNKS + 40);
    await addOtherOwners(db.db, workspace.id, 300, 4);
    await db.db.execute(sql`analyze`);
    const owner = { workspaceId: workspace.id, ownerType: 'user' };
    small = { ...owner, ownerId: 'small' };
    large = { ...owner, ownerId: 'large' };
  }, 120_000);
  afterAll(async () => db?.close());

  it.runIf(testBackend() === 'pglite')('PGlite: every search is planned as before', async () => {
    await searchRecall(db.db, small, requests('coffee')[0]!);
    expect(searchPlanFor(db.db, small)).toBe('custom');
  });

  it.runIf(testBackend() === 'postgres')(
    "a small owner's searches move to generic plans on the statement pool, with the same rows; a large owner's stay custom",
    async () => {
      const pool = statementPoolOf(db.db)!;
      const [mode] = await pool.client<{ mode: string }[]>`
        select current_setting('plan_cache_mode') as mode`;
      expect(mode?.mode).toBe('force_generic_plan');

      for (const query of ['coffee and hiking', 'a flight to the doctor', 'the and of']) {
        for (const request of requests(query)) {
          // First search of the owner: not known yet, so custom, and it learns the owner's size.
          const first = await searchRecall(db.db, small, request);
          await vi.waitFor(() => expect(searchPlanFor(db.db, small)).toBe('generic'));
          // Past the five runs after which PostgreSQL itself may switch plans.
          for (let run = 0; run < 7; run += 1) {
            let again: Awaited<ReturnType<typeof searchRecall>> | undefined;
            expect(
              await poolsOf(db.db, async () => {
                again = await searchRecall(db.db, small, request);
              }),
            ).toEqual(['statement']);
            expect(again).toEqual(first);
          }
          // The same rows as each recall run alone on the main pool.
          if (request.embedding)
            expect(first.vector).toEqual(
              await vectorRecall(db.db, small, request.embedding, request.limit),
            );
          if (request.query !== undefined)
            expect(first.text).toEqual(
              await keywordRecall(db.db, small, request.query, request.limit),
            );
          // The large owner (above SMALL_OWNER_CHUNKS) is searched on the main pool every time.
          expect(
            await poolsOf(db.db, async () => {
              for (let run = 0; run < 3; run += 1) await searchRecall(db.db, large, request);
            }),
          ).toEqual(['main', 'main', 'main']);
          expect(searchPlanFor(db.db, large)).toBe('custom');
        }
      }
      // A filtered search of a small owner too (its plan depends on the owner, not the filter).
      const typed = { ...small, memoryTypes: ['fact'] };
      const [request] = requests('coffee');
      expect(
        await poolsOf(db.db, () => searchRecall(db.db, typed, request!).then(() => {})),
      ).toEqual(['statement']);
      expect((await searchRecall(db.db, typed, request!)).vector).toEqual(
        await vectorRecall(db.db, typed, request!.embedding!, 50),
      );
    },
    120_000,
  );

  it.runIf(testBackend() === 'postgres')(
    'an owner that grew past the limit goes back to custom plans after one search',
    async () => {
      const grower = { ...small, ownerId: 'grower' };
      await addMemories(db.db, grower.workspaceId, 'grower', 20);
      const [request] = requests('coffee and hiking');
      await searchRecall(db.db, grower, request!);
      await vi.waitFor(() => expect(searchPlanFor(db.db, grower)).toBe('generic'));
      await addMemories(db.db, grower.workspaceId, 'grower', SMALL_OWNER_CHUNKS, 20);
      // Still known as small: this search runs the generic statement (an exact vector scan,
      // where a custom plan would read the indexes) and counts the owner again.
      const [ran, found] = await (async () => {
        let result: Awaited<ReturnType<typeof searchRecall>> | undefined;
        const pools = await poolsOf(db.db, async () => {
          result = await searchRecall(db.db, grower, request!);
        });
        return [pools, result!] as const;
      })();
      expect(ran).toEqual(['statement']);
      const exact = await recallRows<MemoryColumns & { id: string; distance: number | string }>(
        db.db,
        exactVectorRecallQuery(db.db, grower, request!.embedding!, 50),
      );
      expect(found.vector).toEqual(
        exact.map((row) => recalled(row.id, row, 1 - Number(row.distance))),
      );
      expect(searchPlanFor(db.db, grower)).toBe('custom');
    },
    60_000,
  );
});

describeDb('search plans with few owners', () => {
  let db: TestDatabase;
  let tiny: RecallFilter;
  beforeAll(async () => {
    db = await createTestDatabase();
    const workspace = await createWorkspace(db.db, { name: 'few' });
    await addMemories(db.db, workspace.id, 'tiny', 5);
    // One other owner of 6,000 chunks: a generic plan expects an owner of half the table, and
    // reads it by a scan of the whole table.
    await addOtherOwners(db.db, workspace.id, 1, 6_000);
    await db.db.execute(sql`analyze`);
    tiny = { workspaceId: workspace.id, ownerType: 'user', ownerId: 'tiny' };
  }, 120_000);
  afterAll(async () => db?.close());

  it.runIf(testBackend() === 'postgres')(
    'no owner gets generic plans while the generic plan would scan the whole table',
    async () => {
      const [request] = requests('coffee');
      const ran = await poolsOf(db.db, async () => {
        for (let run = 0; run < 4; run += 1) {
          await searchRecall(db.db, tiny, request!);
          // Long enough for the background estimate to answer.
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      });
      expect(ran).toEqual(['main', 'main', 'main', 'main']);
      expect(searchPlanFor(db.db, tiny)).toBe('custom');
    },
    60_000,
  );
});

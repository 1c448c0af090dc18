import { afterAll, beforeAll, expect, it } from 'vitest';
import { keywordRecall, type RecallFilter } from '../../src/db/queries/recall.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { memories, memoryChunks } from '../../src/db/schema/index.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';

// Six memories in namespace `a`, six in `b`; "coffee" in every one, "hiking" in a few, and two
// of them no longer current truth (one replaced, one archived by plan retention).
const MEMORIES = Array.from({ length: 12 }, (_, i) => ({
  id: crypto.randomUUID(),
  namespace: i % 2 === 0 ? 'a' : 'b',
  text:
    i % 4 === 0
      ? `Coffee before hiking, trip ${i}`
      : `Coffee with milk, cup ${i}${i > 8 ? ' of a long and winding afternoon chat' : ''}`,
  lifecycleState: i === 4 ? 'superseded' : i === 6 ? 'archived' : 'active',
  archiveRule: i === 6 ? 'retention' : null,
}));

describeDb('keyword recall', () => {
  let db: TestDatabase;
  let filter: RecallFilter;
  beforeAll(async () => {
    db = await createTestDatabase();
    const workspace = await createWorkspace(db.db, { name: 'keyword' });
    filter = { workspaceId: workspace.id, ownerType: 'user', ownerId: 'ana' };
    const owner = { workspaceId: workspace.id, ownerType: 'user', ownerId: 'ana' };
    await db.db
      .insert(memories)
      .values(MEMORIES.map((memory) => ({ ...owner, ...memory, contentHash: memory.id })));
    await db.db.insert(memoryChunks).values(
      MEMORIES.map((memory) => ({
        ...owner,
        memoryId: memory.id,
        chunkIndex: 0,
        text: memory.text,
      })),
    );
  });
  afterAll(async () => db?.close());

  const byText = (hits: Awaited<ReturnType<typeof keywordRecall>>) =>
    new Map(hits.map((hit) => [hit.text, hit.coverage]));

  it('returns live memories only, best first, however far down the ranking they are', async () => {
    const hits = await keywordRecall(db.db, filter, 'coffee hiking', 50);
    expect(hits.map((hit) => hit.text).sort()).toEqual(
      MEMORIES.filter((memory) => memory.lifecycleState === 'active')
        .map((memory) => memory.text)
        .sort(),
    );
    // Both words first; among the rest, shorter chunks first (BM25's length normalisation).
    expect(
      hits
        .slice(0, 2)
        .map((hit) => hit.text)
        .sort(),
    ).toEqual(['Coffee before hiking, trip 0', 'Coffee before hiking, trip 8']);
    expect(hits.at(-1)?.text).toMatch(/long and winding/);
    // The limit counts live memories: the replaced and retention-archived ones cost no place.
    const first = await keywordRecall(db.db, filter, 'coffee hiking', 3);
    expect(first.map((hit) => hit.chunkId)).toEqual(hits.slice(0, 3).map((hit) => hit.chunkId));
  });

  it('a filter narrows what comes back, never what a memory scores', async () => {
    const all = byText(await keywordRecall(db.db, filter, 'coffee hiking', 50));
    for (const namespace of ['a', 'b']) {
      const narrowed = await keywordRecall(db.db, { ...filter, namespace }, 'coffee hiking', 50);
      expect(narrowed.length).toBeGreaterThan(0);
      expect(
        narrowed.every((hit) => MEMORIES.find((m) => m.text === hit.text)?.namespace === namespace),
      ).toBe(true);
      // Coverage is the IDF-weighted share of the query: IDF comes from the owner's chunks,
      // whatever the filter (namespace `b` alone holds no "hiking" at all).
      for (const hit of narrowed) expect(hit.coverage).toBe(all.get(hit.text));
    }
    // History recalls none of these two: replaced, and archived by retention (not expiry).
    const history = await keywordRecall(db.db, { ...filter, history: true }, 'coffee hiking', 50);
    expect(byText(history)).toEqual(all);
  });
});

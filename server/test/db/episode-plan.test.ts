import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executeRows } from '../../src/db/client.js';
import { episodeNeighbours, episodeNeighboursQuery } from '../../src/db/queries/episodes.js';
import type { RecallFilter } from '../../src/db/queries/recall.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';

/** Memories written in one statement share created_at: the worst case for "the one just before". */
const SAME_INSTANT = 5_000;

describeDb('episode neighbour lookups', () => {
  let db: TestDatabase;
  let filter: RecallFilter;
  let ordered: string[];

  beforeAll(async () => {
    db = await createTestDatabase();
    const workspace = await createWorkspace(db.db, { name: 'episodes' });
    filter = { workspaceId: workspace.id, ownerId: 'heavy', ownerType: 'user' };
    for (const owner of ['heavy', 'other']) {
      await db.db.execute(sql`
        with batch as (
          insert into memories (workspace_id, owner_id, owner_type, text, content_hash)
          select ${workspace.id}::uuid, ${owner}, 'user', 'turn ' || g, md5(${owner} || g)
          from generate_series(1, ${SAME_INSTANT}) g
          returning id, owner_id, text
        )
        insert into memory_chunks (memory_id, workspace_id, owner_id, owner_type, chunk_index, text)
        select id, ${workspace.id}::uuid, owner_id, 'user', 0, text from batch`);
    }
    await db.db.execute(sql`analyze`);
    const rows = await executeRows<{ id: string }>(
      db.db,
      sql`select id from memories where owner_id = 'heavy' order by created_at, id`,
    );
    ordered = rows.map((row) => row.id);
  }, 120_000);
  afterAll(async () => db?.close());

  it('finds the memories written just before and after, in (created_at, id) order, within the owner', async () => {
    const middle = 2_500;
    const found = await episodeNeighbours(db.db, filter, [ordered[middle]!], 1800, 2);
    const bySide = found.map((n) => [n.memoryId, n.step]);
    expect(bySide).toEqual(
      expect.arrayContaining([
        [ordered[middle - 1], 1],
        [ordered[middle - 2], 2],
        [ordered[middle + 1], 1],
        [ordered[middle + 2], 2],
      ]),
    );
    expect(found).toHaveLength(4);
    // The first memory has nothing before it.
    const first = await episodeNeighbours(db.db, filter, [ordered[0]!], 1800, 2);
    expect(first.map((n) => n.memoryId)).toEqual([ordered[1], ordered[2]]);
  });

  it('steps along the owner index, even where thousands share one created_at', async () => {
    const seeds = [ordered[100]!, ordered[2_500]!, ordered[4_900]!];
    const plan = (
      await executeRows<{ 'QUERY PLAN': string }>(
        db.db,
        sql`explain (analyze, buffers) ${episodeNeighboursQuery(filter, seeds, 1800, 2)}`,
      )
    )
      .map((row) => row['QUERY PLAN'])
      .join('\n');
    expect(plan).toContain('memories_workspace_owner_created_id_idx');
    expect(plan).not.toMatch(/Seq Scan on memories/);
    // Each side reads its two rows, not the thousands of ties before it.
    const removed = [...plan.matchAll(/Rows Removed by Filter: (\d+)/g)].map((m) => Number(m[1]));
    expect(Math.max(0, ...removed)).toBeLessThan(10);
  });
});

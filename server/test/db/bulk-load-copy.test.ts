import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type postgres from 'postgres';
import { executeRows, type Database } from '../../src/db/client.js';
import { sql } from 'drizzle-orm';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { ApiKeyService } from '../../src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../../src/services/bootstrap.js';
import { createTestDatabase, describeDb, testBackend, type TestDatabase } from '../support/db.js';

interface Synthetic {
  ownerId: string;
  text: string;
  memoryType: 'preference' | 'fact' | 'event' | 'task';
}
interface Loader {
  attach(db: Database, copy?: postgres.Sql): void;
  load(items: Iterable<Synthetic>, batch?: number): Promise<number>;
}
interface BulkLoad {
  bulkLoader(embeddings: LocalEmbeddingProvider, workspaceId: string, options?: object): Loader;
}
interface Generator {
  regularMemory(seed: number, i: number): Synthetic;
  longMemory(seed: number, owner: number, i: number): Synthetic;
}

// The speed bench loads a million rows with COPY: its rows must be the rows the inserts (and so
// the API's write shape) give. Loaded by URL: bench/ is outside this package's sources.
const bench = (path: string) => import(new URL(`../../../bench/lib/${path}`, import.meta.url).href);
const { bulkLoader } = (await bench('bulk-load.ts')) as BulkLoad;
const generator = (await bench('generator.ts')) as Generator;

/** Every column but the ones that differ by construction (ids, times: expiry is `now` plus a term). */
const memoryColumns = `owner_id, owner_type, scope, namespace, container_tag, text, metadata, memory_type,
  importance, chunk_profile, lifecycle_state, archive_rule, confidence, volatility, expires_at is null as lasting,
  effective_at,
  content_hash, feedback_score, claims, claim_keys, pinned, source_weight, priority_score, idempotency_key,
  parent_memory_id, replaced_by_memory_id`;
const chunkColumns = `c.owner_id, c.owner_type, c.chunk_index, c.text, c.embedding::text as embedding,
  c.embedding_provider, c.embedding_dimension, c.embedding_version, c.tsv::text as tsv, m.content_hash`;

// COPY is PostgreSQL's (PGlite loads by insert).
const describePostgres = testBackend() === 'postgres' ? describeDb : describe.skip;

describePostgres('the bench bulk loader: COPY against inserts', () => {
  let database: TestDatabase;
  let workspaceId: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    const apiKeys = await ApiKeyService.create(database.db);
    const boot = await ensureBootstrapWorkspace(database.db, apiKeys, {
      bootstrapApiKey: `mnemo_test_${'c'.repeat(32)}`,
      bootstrapWorkspaceName: 'bulk',
    });
    workspaceId = boot.workspaceId!;
  });
  afterAll(async () => {
    await database?.close();
  });

  it('stores the same memories and chunks either way', async () => {
    const items: Synthetic[] = [
      ...Array.from({ length: 40 }, (_, i) => generator.regularMemory(7, i)),
      ...Array.from({ length: 6 }, (_, i) => generator.longMemory(7, 0, i)),
      // COPY's text format escapes these; a mistake would change the stored text.
      { ownerId: 'x', text: 'Tabs\there, a back\\slash, \\N, and\r\nlines.', memoryType: 'fact' },
    ];
    const as = (prefix: string) =>
      items.map((item) => ({ ...item, ownerId: `${prefix}${item.ownerId}` }));
    const embeddings = new LocalEmbeddingProvider();
    const inserted = bulkLoader(embeddings, workspaceId, { ids: 'insert' });
    inserted.attach(database.db);
    expect(await inserted.load(as('insert:'), 16)).toBe(items.length);
    const client = (database.db as unknown as { $client: postgres.Sql }).$client;
    const copied = bulkLoader(embeddings, workspaceId, { ids: 'copy' });
    copied.attach(database.db, client);
    expect(await copied.load(as('copy:'), 16)).toBe(items.length);

    const read = async (prefix: string) => ({
      memories: await executeRows(
        database.db,
        sql.raw(`select ${memoryColumns.replaceAll('owner_id', `substr(owner_id, ${prefix.length + 1}) as owner_id`)}
          from memories where owner_id like '${prefix}%' order by content_hash, owner_id`),
      ),
      chunks: await executeRows(
        database.db,
        sql.raw(`select ${chunkColumns.replace('c.owner_id', `substr(c.owner_id, ${prefix.length + 1}) as owner_id`)}
          from memory_chunks c join memories m on m.id = c.memory_id
          where c.owner_id like '${prefix}%' order by m.content_hash, c.owner_id, c.chunk_index`),
      ),
    });
    const viaInsert = await read('insert:');
    const viaCopy = await read('copy:');
    expect(viaInsert.memories).toHaveLength(items.length);
    expect(viaInsert.chunks.length).toBeGreaterThan(items.length);
    expect(viaCopy).toEqual(viaInsert);
  });
});

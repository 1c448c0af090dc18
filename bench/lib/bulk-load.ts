/**
 * Fast loading of the synthetic data set, bypassing HTTP but not the write pipeline's shaping:
 * each memory goes through the server's own canonical hash, assessment (confidence, volatility,
 * expiry, claims, pin), chunking and the real local embedder, and its rows are inserted with the
 * server's Drizzle schema in batches (one transaction per batch). The `tsv` column is generated
 * by PostgreSQL, and HNSW/GIN indexes are maintained on insert as for API writes, unless the load
 * runs inside `withIndexesDeferred` (large loads on PostgreSQL: the indexes are dropped and built
 * again afterwards, which is how a million rows load in minutes rather than hours).
 *
 * What it skips, compared with POST /v1/memories: idempotency records and audit rows (the data
 * set is written once), near/semantic dedupe and claim-conflict supersession (exact duplicates
 * of the same owner are skipped, as the API would answer them `deduped`), and extraction into
 * child memories (the HTTP sample measures that).
 */
import { createHash } from 'node:crypto';
import { getTableColumns, getTableName, sql, type Table } from 'drizzle-orm';
import type postgres from 'postgres';
import { assessedColumns } from '../../server/src/services/memory-write/index.js';
import { executeRows, type Database } from '../../server/src/db/client.js';
import {
  memories,
  memoryChunks,
  type NewMemory,
  type NewMemoryChunk,
} from '../../server/src/db/schema/index.js';
import type { EmbeddingProvider } from '../../server/src/providers/embeddings/index.js';
import { chunkText } from '../../server/src/services/chunking.js';
import { assessMemory } from '../../server/src/services/lifecycle/intelligence.js';
import { canonicalHash } from '../../server/src/text/canonical.js';
import {
  HEAVY_MEMORIES,
  heavyMemory,
  longMemoryAt,
  regularMemory,
  type SyntheticMemory,
} from './generator.js';
import { localEmbedder } from './embedder.js';
import { ApiKeyService } from '../../server/src/services/api-keys/index.js';
import { ensureBootstrapWorkspace } from '../../server/src/services/bootstrap.js';

const BATCH = 500;
/** Bind parameters per insert statement stay under PostgreSQL's 65,535. */
const MAX_PARAMETERS = 60_000;

export interface BulkLoader {
  /**
   * Inserts the given memories, `batch` per transaction (the loader's option, else 500); returns
   * how many were stored (exact duplicates skipped).
   */
  load(items: Iterable<SyntheticMemory>, batch?: number): Promise<number>;
  stored: number;
  skipped: number;
}

/**
 * A UUID derived from `key` (a hash, version 4 layout): two databases loaded with the same data
 * and the same `ids` option hold the same ids, so tie-breaks by id (keyword ranking orders equal
 * ranks by chunk id) agree between them.
 */
function derivedUuid(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface BulkLoaderOptions {
  /** Derive memory and chunk ids from this, the owner and the text instead of random ones. */
  ids?: string;
  /** Memories per transaction (500). */
  batch?: number;
}

export function bulkLoader(
  embeddings: EmbeddingProvider,
  workspaceId: string,
  options: BulkLoaderOptions = {},
): BulkLoader & { attach(db: Database, copy?: postgres.Sql): void } {
  // Survives reopening the database between sizes (PGlite is loaded with the server stopped).
  const seen = new Set<string>();
  let db: Database | undefined;
  let copyClient: postgres.Sql | undefined;
  const state = {
    stored: 0,
    skipped: 0,
    /** With `copy` (PostgreSQL), batches are written with COPY on that client instead of inserts. */
    attach(next: Database, copy?: postgres.Sql) {
      db = next;
      copyClient = copy;
    },
    async load(items: Iterable<SyntheticMemory>, batchSize?: number): Promise<number> {
      if (!db) throw new Error('bulk loader has no database');
      let batch: SyntheticMemory[] = [];
      let stored = 0;
      // One batch's insert stays in flight while the next is shaped and embedded: PostgreSQL and
      // this process work at the same time.
      let inFlight: Promise<void> = Promise.resolve();
      const flush = async () => {
        if (batch.length === 0) return;
        const rows = await shapeBatch(embeddings, workspaceId, batch, options.ids);
        batch = [];
        await inFlight;
        inFlight = (copyClient ? copyRows(copyClient, rows) : insertRows(db!, rows)).then((n) => {
          stored += n;
        });
      };
      for (const item of items) {
        const key = `${item.ownerId}|${canonicalHash(item.text)}`;
        if (seen.has(key)) {
          state.skipped += 1;
          continue;
        }
        seen.add(key);
        batch.push(item);
        if (batch.length >= (batchSize ?? options.batch ?? BATCH)) await flush();
      }
      await flush();
      await inFlight;
      state.stored += stored;
      return stored;
    },
  };
  return state;
}

interface ShapedBatch {
  memoryRows: NewMemory[];
  chunkRows: NewMemoryChunk[];
}

async function shapeBatch(
  embeddings: EmbeddingProvider,
  workspaceId: string,
  batch: SyntheticMemory[],
  ids: string | undefined,
): Promise<ShapedBatch> {
  const now = new Date();
  const memoryRows: Array<NewMemory & { id: string }> = [];
  const chunkTexts: string[] = [];
  const chunkOwners: Array<{
    id?: string;
    memoryId: string;
    ownerId: string;
    chunkIndex: number;
  }> = [];
  for (const item of batch) {
    const id =
      ids === undefined
        ? crypto.randomUUID()
        : derivedUuid(`${ids}|${item.ownerId}|${canonicalHash(item.text)}`);
    const assessment = assessMemory(
      {
        text: item.text,
        memoryType: item.memoryType,
        importance: 1,
        metadata: {},
        effectiveAt: item.effectiveAt ?? null,
      },
      now,
    );
    memoryRows.push({
      id,
      workspaceId,
      ownerId: item.ownerId,
      ownerType: 'user',
      scope: null,
      namespace: null,
      containerTag: null,
      text: item.text,
      metadata: {},
      memoryType: item.memoryType,
      importance: 1,
      chunkProfile: 'balanced',
      effectiveAt: item.effectiveAt ?? null,
      contentHash: canonicalHash(item.text),
      idempotencyKey: null,
      ...assessedColumns(assessment),
    });
    chunkText(item.text, 'balanced').forEach((text, chunkIndex) => {
      chunkTexts.push(text);
      chunkOwners.push({
        ...(ids === undefined ? {} : { id: derivedUuid(`${id}|${chunkIndex}`) }),
        memoryId: id,
        ownerId: item.ownerId,
        chunkIndex,
      });
    });
  }
  const vectors = await embeddings.embed(chunkTexts, 'document');
  const chunkRows: NewMemoryChunk[] = chunkTexts.map((text, i) => ({
    ...chunkOwners[i]!,
    workspaceId,
    ownerType: 'user',
    text,
    embedding: vectors[i] ?? null,
    embeddingProvider: embeddings.provider,
    embeddingDimension: embeddings.dimension,
    embeddingVersion: embeddings.version,
  }));
  return { memoryRows, chunkRows };
}

/** Rows per statement for a table of `columns` columns, within MAX_PARAMETERS. */
const rowsPerStatement = (columns: number) => Math.max(1, Math.floor(MAX_PARAMETERS / columns));

function* slices<T>(rows: T[], size: number): Generator<T[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

async function insertRows(db: Database, { memoryRows, chunkRows }: ShapedBatch): Promise<number> {
  await db.transaction(async (tx) => {
    for (const part of slices(
      memoryRows,
      rowsPerStatement(Object.keys(getTableColumns(memories)).length),
    ))
      await tx.insert(memories).values(part);
    for (const part of slices(
      chunkRows,
      rowsPerStatement(Object.keys(getTableColumns(memoryChunks)).length),
    ))
      await tx.insert(memoryChunks).values(part);
  });
  return memoryRows.length;
}

/** A value in COPY's text format: `\N` for null, backslash escapes for the rest. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'boolean'
        ? value
          ? 't'
          : 'f'
        : typeof value === 'number'
          ? String(value)
          : JSON.stringify(value);
  return text.replace(/[\\\n\r\t]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t',
  );
}

/**
 * COPY of rows shaped for `table` (the Drizzle insert shape): the columns are the keys the rows
 * set, each value passed through its column's own driver mapping (JSON, arrays, vectors, times),
 * so the stored row is the one the insert would store; columns no row sets take their defaults.
 */
async function copyInto(
  tx: postgres.TransactionSql,
  table: Table,
  rows: Array<Record<string, unknown>>,
) {
  if (rows.length === 0) return;
  const set = (row: Record<string, unknown>) =>
    Object.keys(row).filter((key) => row[key] !== undefined);
  const columns = Object.entries(getTableColumns(table)).filter(
    ([key]) => rows[0]![key] !== undefined,
  );
  for (const row of rows)
    if (set(row).length !== columns.length)
      throw new Error('bulk load: rows of one COPY must set the same columns');
  const lines = rows.map(
    (row) =>
      columns
        .map(([key, column]) => {
          const value = row[key];
          return copyField(value === null ? null : column.mapToDriverValue(value));
        })
        .join('\t') + '\n',
  );
  const names = columns.map(([, column]) => `"${column.name}"`).join(', ');
  const writable = await tx
    .unsafe(`copy "${getTableName(table)}" (${names}) from stdin`)
    .writable();
  await new Promise<void>((resolve, reject) => {
    writable.on('error', reject);
    writable.end(lines.join(''), () => resolve());
  });
}

async function copyRows(
  client: postgres.Sql,
  { memoryRows, chunkRows }: ShapedBatch,
): Promise<number> {
  await client.begin(async (tx) => {
    await copyInto(tx, memories, memoryRows as Array<Record<string, unknown>>);
    await copyInto(tx, memoryChunks, chunkRows as Array<Record<string, unknown>>);
  });
  return memoryRows.length;
}

/** Memory for building the indexes again after a deferred load (a session setting). */
const INDEX_BUILD_MEMORY = '2GB';

/**
 * Runs `load` with the secondary indexes of memories and memory_chunks (HNSW, GIN, B-tree; not
 * the primary keys, which the foreign keys need) dropped, then builds them again from their own
 * definitions, with `maintenance_work_mem` raised for that session so an HNSW graph is built in
 * memory (and with pgvector's parallel build). PostgreSQL only. The indexes end up the same as
 * the migrations make them; the HNSW graph is the one a build makes, not the one a stream of
 * single inserts grows, so recall is measured on it (the bench's `recall` phase).
 * Returns the seconds spent building.
 */
export async function withIndexesDeferred(
  db: Database,
  load: () => Promise<void>,
): Promise<{ buildSeconds: number }> {
  const definitions = await executeRows<{ name: string; definition: string }>(
    db,
    sql`
    select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid in ('memories'::regclass, 'memory_chunks'::regclass)
      and not i.indisprimary
      and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
    order by c.relname`,
  );
  for (const { name } of definitions) await db.execute(sql.raw(`drop index "${name}"`));
  await load();
  const t0 = performance.now();
  await db.transaction(async (tx) => {
    await tx.execute(sql.raw(`set local maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`));
    await tx.execute(sql.raw('set local max_parallel_maintenance_workers = 2'));
    for (const { definition } of definitions) await tx.execute(sql.raw(definition));
  });
  return { buildSeconds: (performance.now() - t0) / 1000 };
}

/**
 * The bench's workspace on `db` (the server's bootstrap, keyed by `apiKey`) and a loader into it
 * with the local embedder and ids derived from the data, as `bench:ab`, `bench:equality` and
 * `load-heavy.ts` load their data sets.
 */
export async function benchWorkspaceLoader(
  db: Database,
  apiKey: string,
): Promise<ReturnType<typeof bulkLoader> & { workspaceId: string }> {
  const apiKeys = await ApiKeyService.create(db);
  const boot = await ensureBootstrapWorkspace(db, apiKeys, {
    bootstrapApiKey: apiKey,
    bootstrapWorkspaceName: 'bench',
  });
  const loader = bulkLoader(localEmbedder(), boot.workspaceId!, { ids: 'bench' });
  loader.attach(db);
  return Object.assign(loader, { workspaceId: boot.workspaceId! });
}

/**
 * The data set `bench:ab` and `bench:equality` compare on: `regular` (the heavy owner's memories,
 * then `size` regular ones) or `long` (`size` session-length memories).
 */
export async function loadDataSet(
  loader: BulkLoader,
  data: 'regular' | 'long',
  size: number,
  seed: number,
): Promise<void> {
  if (data === 'long') {
    await loader.load(
      (function* () {
        for (let i = 0; i < size; i += 1) yield longMemoryAt(seed, i);
      })(),
      // Long memories are several chunks each: smaller transactions.
      100,
    );
    return;
  }
  await loader.load(Array.from({ length: HEAVY_MEMORIES }, (_, i) => heavyMemory(seed, i)));
  await loader.load(
    (function* () {
      for (let i = 0; i < size; i += 1) yield regularMemory(seed, i);
    })(),
  );
}

import { createHash } from 'node:crypto';
import { statementPoolOf, type Reader } from '../client.js';
import { INDEXED_EMBEDDING_DIMENSIONS } from '../schema/index.js';
import { embeddingType } from './vector.js';

/**
 * Large owners get indexes of their own: an HNSW index on their chunks of each dimension, and a
 * GIN index on their chunks' words (partial indexes whose predicate names the owner).
 * The shared HNSW index serves an owner's vector recall by walking the graph of every owner's
 * chunks and dropping the others' (pgvector's iterative scan): the smaller the owner's share of
 * the table, the more of the graph a search walks. The shared keyword index reads every posting
 * of each (prefix-matched) query word in the table before it keeps the owner's. The planner picks
 * an owner's own index by itself for a search of that owner (its predicate holds the owner's
 * values; a large owner's searches are planned for their values), so the statements do not
 * change.
 */
export interface OwnerIndexPolicy {
  /** Chunks (of one dimension, for an HNSW index) from which an owner gets its own index. */
  minChunks: number;
  /**
   * Largest share of all chunks an owner may hold and still get one: an owner that is most of
   * the table already fills the shared index's graph, and its own would double its write cost
   * for little.
   */
  maxShare: number;
}

export const OWNER_INDEX_POLICY: OwnerIndexPolicy = { minChunks: 5_000, maxShare: 0.25 };

const PREFIX = 'memory_chunks_owner_';
/** What {@link ownerVectorIndexName} and {@link ownerKeywordIndexName} give, and nothing else. */
const OWN_INDEX_NAME = /^memory_chunks_owner_[0-9a-f]{16}_([0-9]+_hnsw|tsv_gin)$/;

export interface OwnerKey {
  workspaceId: string;
  ownerType: string;
  ownerId: string;
}

/** An owner's part of its own indexes' names (a hash: owner ids are no identifiers). */
const ownerHash = (owner: OwnerKey) =>
  createHash('sha256')
    .update(`${owner.workspaceId}\u0000${owner.ownerType}\u0000${owner.ownerId}`)
    .digest('hex')
    .slice(0, 16);

/** The name of an owner's own HNSW index at `dimension`. */
export function ownerVectorIndexName(owner: OwnerKey, dimension: number): string {
  return `${PREFIX}${ownerHash(owner)}_${dimension}_hnsw`;
}

/** The name of an owner's own keyword (GIN) index. */
export function ownerKeywordIndexName(owner: OwnerKey): string {
  return `${PREFIX}${ownerHash(owner)}_tsv_gin`;
}

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** The predicate of an owner's own indexes. */
const ownerPredicate = (owner: OwnerKey) =>
  `workspace_id = ${literal(owner.workspaceId)}::uuid and owner_type = ${literal(owner.ownerType)} and owner_id = ${literal(owner.ownerId)}`;

/** An own index to keep, and what builds it when `create` says it is due. */
interface OwnIndex {
  create: boolean;
  definition: string;
}

export interface OwnerIndexChanges {
  created: string[];
  dropped: string[];
}

/**
 * Creates the own indexes owners have come to need and drops those of owners that shrank below
 * half the threshold (or were erased), concurrently (writes go on). PostgreSQL only: PGlite
 * serves one process's small stores. Each index is built on a reserved connection with no
 * statement timeout; an index a failed build left invalid is dropped and built again.
 */
export async function maintainOwnerIndexes(
  db: Reader,
  policy: OwnerIndexPolicy = OWNER_INDEX_POLICY,
): Promise<OwnerIndexChanges> {
  const pool = statementPoolOf(db);
  if (!pool) return { created: [], dropped: [] };
  const connection = await pool.client.reserve();
  try {
    await connection.unsafe('set statement_timeout = 0');
    const keptFrom = Math.ceil(policy.minChunks / 2);
    // An owner's chunks in all (its words) and of each indexed dimension (its vectors).
    const owners = await connection.unsafe<Array<OwnerKey & { chunks: string; total: string }>>(
      `select workspace_id as "workspaceId", owner_type as "ownerType", owner_id as "ownerId", chunks,
        (select sum(chunks) from owner_chunk_counts) as total
      from owner_chunk_counts where chunks >= $1`,
      [keptFrom],
    );
    const dimensions = await connection.unsafe<
      Array<OwnerKey & { dimension: number; chunks: string }>
    >(
      `with large as (
        select workspace_id, owner_type, owner_id from owner_chunk_counts where chunks >= $1
      )
      select c.workspace_id as "workspaceId", c.owner_type as "ownerType", c.owner_id as "ownerId",
        c.embedding_dimension as dimension, count(*) as chunks
      from memory_chunks c join large using (workspace_id, owner_type, owner_id)
      where c.embedding_dimension in (${INDEXED_EMBEDDING_DIMENSIONS.join(', ')})
      group by 1, 2, 3, 4`,
      [keptFrom],
    );
    const total = Number(owners[0]?.total ?? 0);
    const due = (chunks: number) => chunks >= policy.minChunks && chunks <= policy.maxShare * total;
    const keep = new Map<string, OwnIndex>();
    for (const owner of owners) {
      keep.set(ownerKeywordIndexName(owner), {
        create: due(Number(owner.chunks)),
        definition: `using gin (tsv) where ${ownerPredicate(owner)}`,
      });
    }
    for (const owner of dimensions) {
      const chunks = Number(owner.chunks);
      if (chunks < keptFrom) continue;
      keep.set(ownerVectorIndexName(owner, owner.dimension), {
        create: due(chunks),
        definition: `using hnsw ((embedding::${embeddingType(owner.dimension)}) halfvec_cosine_ops)
          where embedding_dimension = ${owner.dimension} and ${ownerPredicate(owner)}`,
      });
    }
    // Only names of the shapes this module gives: other indexes on the table are not ours.
    const existing = await connection.unsafe<Array<{ name: string; valid: boolean }>>(
      `select i.relname as name, x.indisvalid as valid
      from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = 'memory_chunks'::regclass and i.relname ~ '${OWN_INDEX_NAME.source}'`,
    );
    const valid = new Set(existing.filter((index) => index.valid).map((index) => index.name));
    const changes: OwnerIndexChanges = { created: [], dropped: [] };
    for (const { name } of existing) {
      if (keep.has(name) && valid.has(name)) continue;
      await connection.unsafe(`drop index concurrently if exists "${name}"`);
      if (!keep.has(name)) changes.dropped.push(name);
    }
    for (const [name, index] of keep) {
      if (!index.create || valid.has(name)) continue;
      await connection.unsafe(
        `create index concurrently if not exists "${name}" on memory_chunks ${index.definition}`,
      );
      changes.created.push(name);
    }
    return changes;
  } finally {
    await connection.unsafe('reset statement_timeout').catch(() => undefined);
    connection.release();
  }
}

/**
 * Drops an owner's own indexes now (erasure: their predicates hold the owner's id). PostgreSQL
 * only; a failure leaves them to {@link maintainOwnerIndexes}, which drops indexes of owners
 * with no chunks left.
 */
export async function dropOwnerIndexes(db: Reader, owner: OwnerKey): Promise<string[]> {
  const pool = statementPoolOf(db);
  if (!pool) return [];
  const names = [
    ownerKeywordIndexName(owner),
    ...INDEXED_EMBEDDING_DIMENSIONS.map((n) => ownerVectorIndexName(owner, n)),
  ];
  const present = await pool.client.unsafe<Array<{ name: string }>>(
    `select relname as name from pg_class where relkind = 'i' and relname = any($1::text[])`,
    [names],
  );
  for (const { name } of present)
    await pool.client.unsafe(`drop index concurrently if exists "${name}"`);
  return present.map(({ name }) => name);
}

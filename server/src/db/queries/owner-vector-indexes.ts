import { createHash } from 'node:crypto';
import { statementPoolOf, type Reader } from '../client.js';
import { INDEXED_EMBEDDING_DIMENSIONS } from '../schema/index.js';
import { embeddingType } from './vector.js';

/**
 * Large owners get an HNSW index of their own (a partial index on their chunks of one dimension).
 * The shared index serves an owner's vector recall by walking the graph of every owner's chunks
 * and dropping the others' (pgvector's iterative scan): the smaller the owner's share of the
 * table, the more of the graph a search walks. The planner picks an owner's own index by itself
 * for a search of that owner (its predicate holds the owner's values; searches are planned for
 * their values), so the statements do not change.
 */
export interface OwnerIndexPolicy {
  /** Chunks of one dimension from which an owner gets its own index. */
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
/** What {@link ownerVectorIndexName} gives, and nothing else. */
const OWN_INDEX_NAME = /^memory_chunks_owner_[0-9a-f]{16}_[0-9]+_hnsw$/;

export interface OwnerKey {
  workspaceId: string;
  ownerType: string;
  ownerId: string;
}

/** The name of an owner's own index at `dimension` (a hash: owner ids are no identifiers). */
export function ownerVectorIndexName(owner: OwnerKey, dimension: number): string {
  const hash = createHash('sha256')
    .update(`${owner.workspaceId}\u0000${owner.ownerType}\u0000${owner.ownerId}`)
    .digest('hex')
    .slice(0, 16);
  return `${PREFIX}${hash}_${dimension}_hnsw`;
}

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

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
export async function maintainOwnerVectorIndexes(
  db: Reader,
  policy: OwnerIndexPolicy = OWNER_INDEX_POLICY,
): Promise<OwnerIndexChanges> {
  const pool = statementPoolOf(db);
  if (!pool) return { created: [], dropped: [] };
  const connection = await pool.client.reserve();
  try {
    await connection.unsafe('set statement_timeout = 0');
    const owners = await connection.unsafe<
      Array<OwnerKey & { dimension: number; chunks: string; total: string }>
    >(
      `with large as (
        select workspace_id, owner_type, owner_id from owner_chunk_counts where chunks >= $1
      )
      select c.workspace_id as "workspaceId", c.owner_type as "ownerType", c.owner_id as "ownerId",
        c.embedding_dimension as dimension, count(*) as chunks,
        (select sum(chunks) from owner_chunk_counts) as total
      from memory_chunks c join large using (workspace_id, owner_type, owner_id)
      where c.embedding_dimension in (${INDEXED_EMBEDDING_DIMENSIONS.join(', ')})
      group by 1, 2, 3, 4`,
      [Math.ceil(policy.minChunks / 2)],
    );
    const keep = new Map<string, OwnerKey & { dimension: number; create: boolean }>();
    for (const owner of owners) {
      const chunks = Number(owner.chunks);
      if (chunks < policy.minChunks / 2) continue;
      const create = chunks >= policy.minChunks && chunks <= policy.maxShare * Number(owner.total);
      keep.set(ownerVectorIndexName(owner, owner.dimension), { ...owner, create });
    }
    // Only names of the shape ownerVectorIndexName gives: other indexes on the table are not ours.
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
    for (const [name, owner] of keep) {
      if (!owner.create || valid.has(name)) continue;
      const type = embeddingType(owner.dimension);
      await connection.unsafe(
        `create index concurrently if not exists "${name}" on memory_chunks
        using hnsw ((embedding::${type}) halfvec_cosine_ops)
        where embedding_dimension = ${owner.dimension} and workspace_id = ${literal(owner.workspaceId)}::uuid
          and owner_type = ${literal(owner.ownerType)} and owner_id = ${literal(owner.ownerId)}`,
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
 * only; a failure leaves them to {@link maintainOwnerVectorIndexes}, which drops indexes of
 * owners with no chunks left.
 */
export async function dropOwnerVectorIndexes(db: Reader, owner: OwnerKey): Promise<string[]> {
  const pool = statementPoolOf(db);
  if (!pool) return [];
  const names = INDEXED_EMBEDDING_DIMENSIONS.map((n) => ownerVectorIndexName(owner, n));
  const present = await pool.client.unsafe<Array<{ name: string }>>(
    `select relname as name from pg_class where relkind = 'i' and relname = any($1::text[])`,
    [names],
  );
  for (const { name } of present)
    await pool.client.unsafe(`drop index concurrently if exists "${name}"`);
  return present.map(({ name }) => name);
}

/**
 * Recall of the vector stage against exact search: the server's vector recall statement (HNSW
 * over half-precision embeddings, pgvector's iterative scan) beside a brute-force cosine search in
 * JS over the same chunks embedded again at full precision. A returned chunk counts when its exact
 * distance is within the exact 10th's (ties: templated memories repeat texts, and equal distances
 * may come in any order).
 */
import type { EmbeddingProvider } from '../../server/src/providers/embeddings/index.js';
import { cosineSimilarity } from '../../server/src/db/queries/vector.js';
import { ownerChunkTextsSql, vectorParams, vectorSql, type Execute } from './floor.js';

export interface RecallOutcome {
  queries: number;
  /** Mean over queries of |stage top-k ∩ exact top-k| ÷ k (tie-aware, see above). */
  mean: number;
  min: number;
  /** Chunks the exact search ranked, per query (the owner's embedded chunks). */
  chunks: number;
}

const cosineDistance = (a: readonly number[], b: readonly number[]): number =>
  1 - cosineSimilarity(a, b);

/**
 * Recall@k of the vector stage for one owner over `queries`; `limit` is the stage's candidate
 * count as the server asks it (the balanced profile's 50), of which the first k are compared.
 */
export async function vectorStageRecall(
  execute: Execute,
  embeddings: EmbeddingProvider,
  owner: { workspaceId: string; ownerType: string; ownerId: string },
  queries: readonly string[],
  k = 10,
  limit = 50,
): Promise<RecallOutcome> {
  const dimension = embeddings.dimension;
  const chunks = await execute(ownerChunkTextsSql(dimension), [
    owner.workspaceId,
    owner.ownerType,
    owner.ownerId,
  ]);
  const ids = chunks.map((row) => String(row.id));
  const vectors = chunks.length
    ? await embeddings.embed(
        chunks.map((row) => String(row.text)),
        'document',
      )
    : [];
  const queryVectors = await embeddings.embed([...queries], 'query');
  const recalls: number[] = [];
  for (const query of queryVectors) {
    const exact = ids
      .map((id, i) => ({ id, distance: cosineDistance(query, vectors[i]!) }))
      .sort((a, b) => a.distance - b.distance);
    const wanted = Math.min(k, exact.length);
    if (wanted === 0) continue;
    const kth = exact[wanted - 1]!.distance;
    const exactDistance = new Map(exact.map((e) => [e.id, e.distance]));
    const stage = await execute(
      vectorSql(dimension),
      vectorParams(owner, `[${query.join(',')}]`, limit),
    );
    const found = stage
      .slice(0, wanted)
      .filter((row) => (exactDistance.get(String(row.id)) ?? Infinity) <= kth + 1e-9).length;
    recalls.push(found / wanted);
  }
  return {
    queries: recalls.length,
    mean: recalls.reduce((a, b) => a + b, 0) / Math.max(1, recalls.length),
    min: Math.min(...recalls),
    chunks: ids.length,
  };
}

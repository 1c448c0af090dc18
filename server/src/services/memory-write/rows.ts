import type { MemorySpace } from '../../db/queries/memory-writes.js';
import type { EmbeddingProvider } from '../../providers/embeddings/index.js';
import type { MemoryAssessment } from '../lifecycle/intelligence.js';

/** The columns a write derives from the text and payload. */
export function assessedColumns(assessment: MemoryAssessment) {
  return {
    confidence: assessment.confidence,
    volatility: assessment.volatility,
    expiresAt: assessment.expiresAt,
    claims: assessment.claims,
    claimKeys: assessment.claimKeys,
    pinned: assessment.pinned,
    sourceWeight: assessment.sourceWeight,
    priorityScore: assessment.priorityScore,
  };
}

/**
 * Chunk rows of one memory, each with its vector and the embedder that made it. A chunk without a
 * vector (embedding skipped for the plan's budget) names no embedder either: vector search and the
 * nearest-memory lookup select chunks by `embedding_dimension`, so it never meets them, while
 * keyword search still finds its text.
 */
export function chunkRows(
  embeddings: EmbeddingProvider,
  space: MemorySpace,
  texts: string[],
  vectors: number[][],
) {
  return texts.map((text, chunkIndex) => {
    const embedding = vectors[chunkIndex] ?? null;
    return {
      workspaceId: space.workspaceId,
      ownerId: space.ownerId,
      ownerType: space.ownerType,
      chunkIndex,
      text,
      embedding,
      ...embedderOf(embeddings, embedding !== null),
    };
  });
}

/** The embedder columns of chunks: null when they have no vectors. */
export function embedderOf(embeddings: EmbeddingProvider, embedded: boolean) {
  return embedded
    ? {
        embeddingProvider: embeddings.provider,
        embeddingDimension: embeddings.dimension,
        embeddingVersion: embeddings.version,
      }
    : { embeddingProvider: null, embeddingDimension: null, embeddingVersion: null };
}

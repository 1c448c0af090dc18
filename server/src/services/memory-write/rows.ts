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

/** Chunk rows of one memory, each with its vector and the embedder that made it. */
export function chunkRows(
  embeddings: EmbeddingProvider,
  space: MemorySpace,
  texts: string[],
  vectors: number[][],
) {
  return texts.map((text, chunkIndex) => ({
    workspaceId: space.workspaceId,
    ownerId: space.ownerId,
    ownerType: space.ownerType,
    chunkIndex,
    text,
    embedding: vectors[chunkIndex] ?? null,
    embeddingProvider: embeddings.provider,
    embeddingDimension: embeddings.dimension,
    embeddingVersion: embeddings.version,
  }));
}

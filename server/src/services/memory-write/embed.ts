import { ServiceError } from '../../errors.js';
import { EmbeddingError, type EmbeddingProvider } from '../../providers/embeddings/index.js';

/** Embeds a write's chunks as documents; a provider failure is the server's, not the caller's. */
export async function embed(provider: EmbeddingProvider, chunks: string[]): Promise<number[][]> {
  try {
    return await provider.embed(chunks, 'document');
  } catch (error) {
    if (error instanceof EmbeddingError) {
      // Nothing was written; the caller may retry. Upstream failures are not the caller's fault.
      throw new ServiceError('INTERNAL', `Embedding failed: ${error.message}`);
    }
    throw error;
  }
}

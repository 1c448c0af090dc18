import { localWordVectors } from '../../server/src/providers/embeddings/index.js';
import { LocalEmbeddingProvider } from '../../server/src/providers/embeddings/local.js';

/**
 * The local embedder as the server builds it from this environment: with the word-vector table
 * when MNEMO_EMBEDDINGS_WORD_VECTORS asks for it (mnemo-local-v3), else lexical only
 * (mnemo-local-v2). Bulk-loaded chunks must be embedded like the server embeds queries, or vector
 * recall compares nothing.
 */
export function localEmbedder(): LocalEmbeddingProvider {
  const wordVectors = localWordVectors(process.env.MNEMO_EMBEDDINGS_WORD_VECTORS, (message) =>
    process.stderr.write(`${message}\n`),
  );
  return new LocalEmbeddingProvider(wordVectors ? { wordVectors } : {});
}

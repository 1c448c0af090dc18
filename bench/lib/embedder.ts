import { localWordVectors } from '../../server/src/providers/embeddings/index.js';
import { LocalEmbeddingProvider } from '../../server/src/providers/embeddings/local.js';

/**
 * The local embedder as the server builds it from this environment: with the installed
 * word-vector table (mnemo-local-v3) unless MNEMO_EMBEDDINGS_WORD_VECTORS is `off` or the table
 * is missing, then lexical only (mnemo-local-v2). Bulk-loaded chunks must be embedded like the
 * server embeds queries, or vector recall compares nothing.
 */
export function localEmbedder(): LocalEmbeddingProvider {
  const wordVectors = localWordVectors(process.env.MNEMO_EMBEDDINGS_WORD_VECTORS, (message) =>
    process.stderr.write(`${message}\n`),
  );
  return new LocalEmbeddingProvider(wordVectors ? { wordVectors } : {});
}

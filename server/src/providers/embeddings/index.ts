import type { EmbeddingsConfig } from '../../config.js';
import { LocalEmbeddingProvider } from './local.js';
import { OpenAIEmbeddingProvider } from './openai.js';
import type { EmbeddingProvider } from './types.js';
import { DEFAULT_WORD_VECTORS_PATH, loadWordVectors, type WordVectors } from './word-vectors.js';

export type { EmbeddingProvider, EmbeddingPurpose } from './types.js';
export { EmbeddingError } from './types.js';

/** Tables already read, by path: tests build many apps in one process. */
const tables = new Map<string, ReturnType<typeof loadWordVectors>>();

/**
 * The local embedder's word vectors as configured (MNEMO_EMBEDDINGS_WORD_VECTORS): unset or `on`,
 * the committed table (mnemo-local-v3, the default); `off`, none (the lexical
 * mnemo-local-v2); else a table's path. A table asked for but missing or unreadable is reported
 * to `warn` and the embedder stays lexical.
 */
export function localWordVectors(
  setting: string | undefined,
  warn: (message: string) => void = () => {},
): WordVectors | undefined {
  if (setting === 'off') return undefined;
  const path = setting === undefined || setting === 'on' ? DEFAULT_WORD_VECTORS_PATH : setting;
  let loaded = tables.get(path);
  if (!loaded) tables.set(path, (loaded = loadWordVectors(path)));
  if (loaded.table) return loaded.table;
  warn(
    `local embedder without word vectors (${loaded.reason}): lexical only (mnemo-local-v2). ` +
      'Point MNEMO_EMBEDDINGS_WORD_VECTORS at a table (server/assets/wink-sg-100d.bin.gz), ' +
      'or set MNEMO_EMBEDDINGS_WORD_VECTORS=off to silence this.',
  );
  return undefined;
}

/** The one provider that embeds both memories and queries, as configured. */
export function createEmbeddingProvider(
  config: EmbeddingsConfig,
  fetchImpl?: typeof fetch,
  warn?: (message: string) => void,
): EmbeddingProvider {
  if (config.provider === 'local') {
    const wordVectors = localWordVectors(config.wordVectors, warn);
    return new LocalEmbeddingProvider(wordVectors ? { wordVectors } : {});
  }
  return new OpenAIEmbeddingProvider({
    baseUrl: config.baseUrl,
    model: config.model,
    dimension: config.dimensions,
    sendDimensions: config.sendDimensions,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    batchSize: config.batchSize,
    timeoutMs: config.timeoutMs,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

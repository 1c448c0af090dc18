import type { EmbeddingsConfig } from '../../config.js';
import { LocalEmbeddingProvider } from './local.js';
import { OpenAIEmbeddingProvider } from './openai.js';
import type { EmbeddingProvider } from './types.js';

export type { EmbeddingProvider, EmbeddingPurpose } from './types.js';
export { EmbeddingError } from './types.js';

/** The one provider that embeds both memories and queries, as configured. */
export function createEmbeddingProvider(
  config: EmbeddingsConfig,
  fetchImpl?: typeof fetch,
): EmbeddingProvider {
  if (config.provider === 'local') return new LocalEmbeddingProvider();
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

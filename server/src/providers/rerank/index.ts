import type { RerankConfig } from '../../config.js';
import { HttpReranker } from './http.js';
import { LocalReranker } from './local.js';
import type { Reranker } from './types.js';
import { SetupError } from '../../errors.js';

export type { Reranker, RerankOptions } from './types.js';
export { RerankError } from './types.js';

/** The configured rerank step, or undefined for none. */
export function createReranker(config: RerankConfig): Reranker | undefined {
  switch (config.provider) {
    case 'none':
      return undefined;
    case 'local':
      return new LocalReranker();
    case 'http':
      if (!config.baseUrl)
        throw new SetupError('MNEMO_RERANK_BASE_URL is required for the http reranker');
      return new HttpReranker({
        baseUrl: config.baseUrl,
        ...(config.model ? { model: config.model } : {}),
        ...(config.apiKey ? { apiKey: config.apiKey } : {}),
        timeoutMs: config.timeoutMs,
      });
  }
}

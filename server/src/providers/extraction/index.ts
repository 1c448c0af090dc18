import { LocalExtractor } from './local.js';
import { OpenAIExtractor } from './openai.js';
import type { Extractor } from './types.js';

export type { ExtractedMemory, Extractor } from './types.js';
export { ExtractionError } from './types.js';
export { LocalExtractor } from './local.js';
export {
  EXTRACTION_SYSTEM_PROMPT,
  OpenAIExtractor,
  type OpenAIExtractorOptions,
} from './openai.js';
import { SetupError } from '../../errors.js';

/** How memories are split into children. */
export interface ExtractorConfig {
  /** `local` (default in config): rules, no network. `openai`: any OpenAI-compatible chat API. */
  provider: 'local' | 'openai';
  /** Required for `openai`, e.g. `https://api.openai.com/v1`. */
  baseUrl?: string;
  apiKey?: string;
  /** Required for `openai`, e.g. `gpt-4o-mini`. */
  model?: string;
  /** Per-attempt timeout for `openai`. Default 8000. */
  timeoutMs?: number;
}

/** The extractor the write path uses, as configured. */
export function createExtractor(config: ExtractorConfig, fetchImpl?: typeof fetch): Extractor {
  if (config.provider === 'local') return new LocalExtractor();
  if (config.provider !== 'openai') {
    throw new SetupError(`unknown extraction provider: ${String(config.provider)}`);
  }
  if (!config.baseUrl || !config.model) {
    throw new SetupError('the openai extractor needs both `baseUrl` and `model`');
  }
  return new OpenAIExtractor({
    baseUrl: config.baseUrl,
    model: config.model,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

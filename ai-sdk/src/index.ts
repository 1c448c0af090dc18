/**
 * Mnemo memory for the Vercel AI SDK (`ai`): memory tools a model can call, and a middleware
 * that gives the model an owner's memories before each turn and keeps what the turn taught.
 * Built on `@mnemo/client`.
 *
 * @example
 * ```ts
 * import { generateText, wrapLanguageModel } from 'ai';
 * import { MemoryClient } from '@mnemo/client';
 * import { mnemoMemory, mnemoTools } from '@mnemo/ai-sdk';
 *
 * const client = new MemoryClient({ apiKey: process.env.MNEMO_API_KEY });
 * const model = wrapLanguageModel({ model: baseModel, middleware: mnemoMemory({ client, owner: 'u_42' }) });
 * const { text } = await generateText({ model, tools: mnemoTools({ client, owner: 'u_42' }), prompt });
 * ```
 * @packageDocumentation
 */
export {
  defaultFormatContext,
  mnemoMemory,
  type MnemoMemoryMiddleware,
  type MnemoMemoryOptions,
  type MnemoMemoryStage,
  type MnemoProviderMetadata,
  type RememberMode,
  type RememberOutcome,
} from './middleware.js';
export {
  mnemoTools,
  type AddMemoryInput,
  type AddMemoryOutput,
  type FoundMemory,
  type GetContextInput,
  type GetContextOutput,
  type MnemoTools,
  type MnemoToolsOptions,
  type SearchMemoriesInput,
  type SearchMemoriesOutput,
} from './tools.js';
export type { MnemoBaseOptions, MnemoClientLike, MnemoOwner, MnemoScope } from './options.js';

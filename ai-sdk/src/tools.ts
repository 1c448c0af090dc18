import { LIMITS, MEMORY_TYPES, type MemoryType, type Metadata } from '@mnemo/client';
import { tool, type Tool } from 'ai';
import { z } from 'zod/v4';
import { ownerParams, scopeParams, writeMetadata, type MnemoBaseOptions } from './options.js';

/** Options of {@link mnemoTools}. */
export interface MnemoToolsOptions extends MnemoBaseOptions {
  /** Results `searchMemories` returns when the model asks for no number (default 5). */
  defaultTopK?: number | undefined;
  /** Metadata kept on every memory `addMemory` stores (besides `ingest: "ai-sdk"`). */
  metadata?: Metadata | undefined;
  /**
   * Whether the server extracts atomic memories from what `addMemory` stores (default: the
   * server's, which extracts when the plan and budget allow).
   */
  extract?: boolean | undefined;
}

/** One memory `searchMemories` found. */
export interface FoundMemory {
  memoryId: string;
  text: string;
  /** Relevance, higher is better. */
  score: number;
}

export interface SearchMemoriesInput {
  query: string;
  topK?: number | undefined;
}
export interface SearchMemoriesOutput {
  memories: FoundMemory[];
}

export interface AddMemoryInput {
  text: string;
  memoryType?: MemoryType | undefined;
}
export interface AddMemoryOutput {
  memoryId: string;
  /** True when the text repeated a memory already kept (no new memory then). */
  deduped: boolean;
}

export interface GetContextInput {
  query: string;
}
export interface GetContextOutput {
  /** Numbered lines (`[1] …`), or empty when nothing is known. */
  context: string;
  /** Which memory each number cites. */
  citations: Array<{ i: number; memoryId: string }>;
}

/**
 * The tools of {@link mnemoTools}, by the names the model sees (a type alias, not an interface,
 * so that it is a `ToolSet` and spreads into one).
 */
export type MnemoTools = {
  searchMemories: Tool<SearchMemoriesInput, SearchMemoriesOutput>;
  addMemory: Tool<AddMemoryInput, AddMemoryOutput>;
  getContext: Tool<GetContextInput, GetContextOutput>;
};

const DEFAULT_TOP_K = 5;

/**
 * Memory tools for `generateText`, `streamText` or an agent: `searchMemories`, `addMemory` and
 * `getContext`, each bound to one owner (the model cannot name another). A failed call throws
 * the client's error, which the AI SDK hands to the model as the tool's error.
 *
 * @example
 * ```ts
 * import { generateText, stepCountIs } from 'ai';
 * import { MemoryClient } from '@mnemo/client';
 * import { mnemoTools } from '@mnemo/ai-sdk';
 *
 * const client = new MemoryClient({ apiKey: process.env.MNEMO_API_KEY });
 * const { text } = await generateText({
 *   model,
 *   tools: mnemoTools({ client, owner: 'u_42' }),
 *   stopWhen: stepCountIs(5),
 *   prompt: 'Where should I sit on my flight to Tokyo?',
 * });
 * ```
 */
export function mnemoTools(options: MnemoToolsOptions): MnemoTools {
  const { client, defaultTopK = DEFAULT_TOP_K, metadata, extract } = options;
  const owner = ownerParams(options.owner);
  const scope = scopeParams(options);
  const query = z
    .string()
    .min(LIMITS.query.min)
    .max(LIMITS.query.max)
    .describe('What to look for, in plain words (a question or a topic)');

  return {
    searchMemories: tool({
      description:
        'Search what is remembered about the user: facts, preferences, past events and ' +
        'decisions. Use it before answering anything that may depend on them. Returns the ' +
        'best-matching memories, most relevant first.',
      inputSchema: z.object({
        query,
        topK: z
          .number()
          .int()
          .min(LIMITS.topK.min)
          .max(LIMITS.topK.max)
          .optional()
          .describe(`How many memories to return (default ${defaultTopK})`),
      }),
      execute: async ({ query, topK }, { abortSignal }): Promise<SearchMemoriesOutput> => {
        const { results } = await client.search.query(
          { query, top_k: topK ?? defaultTopK, ...owner, ...scope },
          { signal: abortSignal },
        );
        return {
          memories: results.map((hit) => ({
            memoryId: hit.memory_id,
            text: hit.text,
            score: hit.score,
          })),
        };
      },
    }),
    addMemory: tool({
      description:
        'Remember something durable the user said about themselves or asked you to remember ' +
        '(a fact, a preference, a decision, an event), as one short self-contained statement. ' +
        'Do not store small talk or things only true for this conversation.',
      inputSchema: z.object({
        text: z
          .string()
          .min(LIMITS.memoryText.min)
          .max(LIMITS.memoryText.max)
          .describe('The statement to remember, e.g. "Prefers aisle seats on long flights"'),
        memoryType: z.enum(MEMORY_TYPES).optional().describe('What kind of memory it is'),
      }),
      execute: async ({ text, memoryType }, { abortSignal }): Promise<AddMemoryOutput> => {
        const stored = await client.memories.add(
          {
            text,
            ...(memoryType ? { memory_type: memoryType } : {}),
            ...(extract === undefined ? {} : { extract }),
            metadata: writeMetadata(metadata, 'tool'),
            ...owner,
            ...scope,
          },
          { signal: abortSignal },
        );
        return { memoryId: stored.memory_id, deduped: stored.deduped ?? false };
      },
    }),
    getContext: tool({
      description:
        'Get what is remembered about the user that bears on a question, as numbered lines ' +
        'ready to quote ([1], [2], ...). Prefer it to searchMemories when you need background ' +
        'for an answer rather than a list.',
      inputSchema: z.object({ query }),
      execute: async ({ query }, { abortSignal }): Promise<GetContextOutput> => {
        const context = await client.context.get(
          { query, ...owner, ...scope },
          { signal: abortSignal },
        );
        return {
          context: context.context_text,
          citations: context.citations.map(({ i, memory_id }) => ({ i, memoryId: memory_id })),
        };
      },
    }),
  };
}

import type { ContextResponse } from '@mnemo/contract';
import { linkedFirstChunks } from '../../db/queries/signals.js';
import { searchMemories, type SearchDeps, type SearchRequest } from './search.js';
import { wordCoverage } from './ranking.js';

/** Longest text of one block; longer chunks end with an ellipsis. */
export const MAX_BLOCK_CHARS = 1200;
/** Longest context_text: about 2,000 tokens, a comfortable share of any model's prompt. */
export const MAX_CONTEXT_CHARS = 8000;
/** Linked memories added after the hits, at most. */
export const MAX_LINKED = 3;
/** A linked memory joins the context only when it relates to the query at least this much. */
const LINKED_MIN_RELEVANCE = 0.15;

/**
 * The dot product, which is the cosine similarity here: every embedding provider returns
 * unit-length vectors (see `EmbeddingProvider.embed`; the local one leaves only an all-zero
 * vector unscaled, which scores 0), and stored chunk embeddings come from those providers.
 */
function dot(a: number[], b: number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_BLOCK_CHARS ? flat : `${flat.slice(0, MAX_BLOCK_CHARS - 1).trimEnd()}…`;
}

interface Block {
  chunkId: string;
  memoryId: string;
  chunkIndex: number;
  text: string;
  /** For linked memories: the block number of the hit they are linked to. */
  linkedTo?: number;
}

/**
 * POST /v1/context: the search, then a prompt-ready block. Format:
 *
 *     Relevant memories (most relevant first; cite by number):
 *     [1] <memory text>
 *     [2] <memory text>
 *
 *     Linked memories:
 *     [3] <memory text> (linked to [1])
 *
 * `citations[k]` maps number `i` to its chunk and memory. Blocks stop before the text would pass
 * MAX_CONTEXT_CHARS; `context_blocks` counts the blocks included.
 */
export async function buildContext(
  deps: SearchDeps,
  request: SearchRequest,
): Promise<ContextResponse> {
  const outcome = await searchMemories(deps, request);
  const blocks: Block[] = outcome.hits.map((hit) => ({
    chunkId: hit.chunkId,
    memoryId: hit.memoryId,
    chunkIndex: hit.chunkIndex,
    text: clip(hit.text),
  }));

  const linked = await linkedFirstChunks(
    deps.db,
    outcome.filter,
    outcome.hits.map((hit) => hit.memoryId),
    MAX_LINKED * 5,
  );
  const relevantLinked = linked
    .map((chunk) => {
      const lexical = wordCoverage(outcome.queryTerms, chunk.text);
      const semantic =
        outcome.queryEmbedding &&
        chunk.embedding &&
        chunk.embeddingDimension === outcome.queryEmbedding.length
          ? dot(outcome.queryEmbedding, chunk.embedding)
          : 0;
      return { chunk, relevance: Math.max(lexical, semantic) };
    })
    .filter(({ relevance }) => relevance >= LINKED_MIN_RELEVANCE)
    .sort((a, b) => b.relevance - a.relevance)
    .slice(0, MAX_LINKED);
  for (const { chunk } of relevantLinked) {
    const hitIndex = blocks.findIndex((block) => block.memoryId === chunk.linkedFrom);
    blocks.push({
      chunkId: chunk.chunkId,
      memoryId: chunk.memoryId,
      chunkIndex: chunk.chunkIndex,
      text: clip(chunk.text),
      linkedTo: hitIndex + 1,
    });
  }

  const lines: string[] = [];
  const citations: ContextResponse['citations'] = [];
  let length = 0;
  for (const block of blocks) {
    const i = citations.length + 1;
    const header =
      block.linkedTo !== undefined && !lines.includes('Linked memories:')
        ? ['', 'Linked memories:']
        : [];
    const line = `[${i}] ${block.text}${block.linkedTo ? ` (linked to [${block.linkedTo}])` : ''}`;
    const added = [...header, line].join('\n').length + 1;
    if (length + added > MAX_CONTEXT_CHARS) break;
    lines.push(...header, line);
    length += added;
    citations.push({
      i,
      chunk_id: block.chunkId,
      memory_id: block.memoryId,
      chunk_index: block.chunkIndex,
    });
  }
  const contextText =
    citations.length === 0
      ? ''
      : ['Relevant memories (most relevant first; cite by number):', ...lines].join('\n');

  return {
    context_text: contextText,
    citations,
    context_blocks: citations.length,
    page: outcome.page,
    page_size: outcome.page_size,
    total: outcome.total,
    has_more: outcome.has_more,
  };
}

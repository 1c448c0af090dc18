import { LIMITS, type ContextPayload, type ContextResponse } from '@mnemo/contract';
import { pinnedFirstChunks } from '../../db/queries/pins.js';
import { linkedFirstChunks } from '../../db/queries/signals.js';
import { recallFilter, searchMemories, type SearchDeps, type SearchRequest } from './search.js';
import { wordCoverage, type Candidate } from './ranking.js';

/** Longest text of one block; longer chunks end with an ellipsis. */
export const MAX_BLOCK_CHARS = 1200;
/** Longest context_text: about 2,000 tokens, a comfortable share of any model's prompt. */
export const MAX_CONTEXT_CHARS = 8000;
/** Characters per token of a `max_tokens` budget (the estimate metering uses: estimateTokens). */
const CHARS_PER_TOKEN = 4;
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

/**
 * A hit that is history (its time-bound wording has expired: see historyFactor) says so, with the
 * day it was said of, so that "I'm in Lisbon this week" is not read as today's truth.
 */
function historyNote(expiresAtMs: number | null, memoryTimeMs: number, now: number): string {
  if (expiresAtMs === null || expiresAtMs > now) return '';
  return ` (history, as of ${new Date(memoryTimeMs).toISOString().slice(0, 10)})`;
}

const hitHistoryNote = (hit: Candidate, now: number) =>
  historyNote(hit.expiresAt?.getTime() ?? null, (hit.effectiveAt ?? hit.createdAt).getTime(), now);

interface Block {
  kind: 'pinned' | 'hit' | 'linked';
  chunkId: string;
  memoryId: string;
  chunkIndex: number;
  text: string;
  /** For linked memories: the index in the block list of the hit they are linked to. */
  linkedTo?: number;
}

/** The heading of each kind of block, shown once before the first block of its kind. */
const SECTION_HEADINGS: Record<Block['kind'], string> = {
  pinned: 'Pinned memories (cite by number):',
  hit: 'Relevant memories (most relevant first; cite by number):',
  linked: 'Linked memories:',
};

/**
 * POST /v1/context: the search, then a prompt-ready block. Format:
 *
 *     Pinned memories (cite by number):
 *     [1] <memory text>
 *
 *     Relevant memories (most relevant first; cite by number):
 *     [2] <memory text>
 *     [3] <memory text> (history, as of 2026-05-14)
 *
 *     Linked memories:
 *     [4] <memory text> (linked to [2])
 *
 * A memory whose time-bound wording has expired (history: see historyFactor), hit, pinned or
 * linked, ends with `(history, as of <day of its effective_at, else created_at>)`.
 * Pinned memories (PATCH /v1/profile/pins) are the owner's pinned memories that a search could
 * return (current truth and history; not replaced, not archived by retention), in pin order,
 * on the first page only; a pinned memory is never among the ranked or linked ones (on any page,
 * so that paging does not show it twice). Links
 * are followed from the ranked hits. `citations[k]` maps number `i` to its chunk and memory.
 * Blocks stop before the text would pass MAX_CONTEXT_CHARS (so many pins can leave no room for
 * ranked memories); `context_blocks` counts the blocks included.
 */
export async function buildContext(
  deps: SearchDeps,
  contextRequest: SearchRequest & { payload: ContextPayload },
): Promise<ContextResponse> {
  const { max_tokens: maxTokens, ...searchPayload } = contextRequest.payload;
  // A budget without a page size packs from the widest page: the budget, not the count, decides.
  const packsWidest =
    maxTokens !== undefined &&
    searchPayload.page_size === undefined &&
    searchPayload.top_k === undefined;
  const request: SearchRequest = {
    ...contextRequest,
    payload: packsWidest
      ? { ...searchPayload, page_size: LIMITS.searchPageSize.max }
      : searchPayload,
  };
  const maxChars = maxTokens === undefined ? MAX_CONTEXT_CHARS : maxTokens * CHARS_PER_TOKEN;
  // Pins do not depend on the ranking: they are read beside the search, so context costs one
  // round trip more than its search (the links of its hits), not two.
  const pins = pinnedFirstChunks(deps.reader, recallFilter(request.workspaceId, request.payload));
  pins.catch(() => undefined); // awaited below; a failed search must not leave it unhandled
  const outcome = await searchMemories(deps, request);
  const [pinned, linked] = await Promise.all([
    pins,
    linkedFirstChunks(
      deps.reader,
      outcome.filter,
      outcome.hits.map((hit) => hit.memoryId),
      MAX_LINKED * 5,
    ),
  ]);
  const pinnedIds = new Set(pinned.map((chunk) => chunk.memoryId));
  // A hit stands for its whole fact (the memory and those extracted from it: see
  // oneResultPerFact); no member of a fact is put in the prompt twice.
  const factOf = new Map<string, string>();
  for (const hit of outcome.hits)
    for (const member of [hit, ...(hit.related ?? [])]) factOf.set(member.memoryId, hit.memoryId);
  const pinnedFacts = new Set([...pinnedIds].map((id) => factOf.get(id) ?? id));
  const now = Date.now();
  const blocks: Block[] = [
    ...(outcome.page === 1 ? pinned : []).map((chunk) => ({
      kind: 'pinned' as const,
      chunkId: chunk.chunkId,
      memoryId: chunk.memoryId,
      chunkIndex: chunk.chunkIndex,
      text: clip(chunk.text) + historyNote(chunk.expiresAtMs, chunk.memoryTimeMs, now),
    })),
    ...outcome.hits
      .filter((hit) => !pinnedFacts.has(hit.memoryId))
      .map((hit) => ({
        kind: 'hit' as const,
        chunkId: hit.chunkId,
        memoryId: hit.memoryId,
        chunkIndex: hit.chunkIndex,
        text: clip(hit.text) + hitHistoryNote(hit, now),
      })),
  ];

  const relevantLinked = linked
    .filter((chunk) => !pinnedIds.has(chunk.memoryId) && !factOf.has(chunk.memoryId))
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
      kind: 'linked',
      chunkId: chunk.chunkId,
      memoryId: chunk.memoryId,
      chunkIndex: chunk.chunkIndex,
      text: clip(chunk.text) + historyNote(chunk.expiresAtMs, chunk.memoryTimeMs, now),
      linkedTo: hitIndex,
    });
  }

  const lines: string[] = [];
  const citations: ContextResponse['citations'] = [];
  let length = 0;
  let section: Block['kind'] | undefined;
  /** The citation number of each block put in, by its index in `blocks`. */
  const numberOf = new Map<number, number>();
  for (const [index, block] of blocks.entries()) {
    const i = citations.length + 1;
    const linkedTo = block.linkedTo === undefined ? undefined : numberOf.get(block.linkedTo);
    // A linked memory is there for its hit: without the hit in the text it is left out too.
    if (block.kind === 'linked' && linkedTo === undefined) continue;
    // Without a budget the first heading is not counted against the limit (it was always there);
    // later ones are, and every heading counts against a caller's budget.
    const header =
      section === undefined || block.kind === section ? [] : ['', SECTION_HEADINGS[block.kind]];
    const line = `[${i}] ${block.text}${linkedTo ? ` (linked to [${linkedTo}])` : ''}`;
    const first = section === undefined && maxTokens !== undefined;
    const added =
      [...header, line].join('\n').length + 1 + (first ? SECTION_HEADINGS[block.kind].length : 0);
    // A block that does not fit is left out; a shorter, less relevant one after it may still fit.
    if (length + added > maxChars) continue;
    if (section === undefined) lines.push(SECTION_HEADINGS[block.kind]);
    lines.push(...header, line);
    section = block.kind;
    length += added;
    numberOf.set(index, i);
    citations.push({
      i,
      chunk_id: block.chunkId,
      memory_id: block.memoryId,
      chunk_index: block.chunkIndex,
    });
  }
  const contextText = citations.length === 0 ? '' : lines.join('\n');

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

import type { MemoryInsertPayload } from '@mnemo/contract';
import { ServiceError } from '../../errors.js';
import type { Extractor } from '../../providers/extraction/index.js';
import { estimateEmbedTokens, priceWork, type AiPrices } from '../ai-cost.js';
import { chunkText } from '../chunking.js';
import type { UsageAmounts, UsageReservation } from '../quota.js';
import { extractionCost, extractionWanted, type ExtractionRefusal } from './extract.js';
import type { MemoryWriteDeps, PreparedWrite } from './types.js';

/**
 * The parts of a write the plan may refuse while the memory is still stored, by the resources
 * each consumes (as the details of `CAP_EXCEEDED` name them). The write itself (`writes`,
 * `storage`) is never optional: over those caps nothing is written.
 */
const EMBEDDING = new Set(['embeds', 'embed_tokens']);
const EXTRACTION = new Set(['extraction_calls', 'gen_tokens']);

/** What the plan granted a write, held in one reservation. */
export interface WriteBudget {
  reservation: UsageReservation;
  /** False: the plan's embeds or embed tokens are spent; the memory is stored without vectors. */
  embed: boolean;
  /** What was reserved for the extraction call; undefined when none is made. */
  extraction: UsageAmounts | undefined;
  /** Why the plan refused the extraction call it would have made. */
  extractionRefused: ExtractionRefusal | undefined;
}

/** What a write asks of the AI providers: the one count its quota and its AI cost are both made of. */
export interface WriteAiWork {
  /** Its chunks embedded; undefined when it has none. */
  embedding: UsageAmounts | undefined;
  /** The extraction call; undefined when none would be made. */
  extraction: UsageAmounts | undefined;
}

type WorkPayload = Pick<MemoryInsertPayload, 'text' | 'extract' | 'importance' | 'chunk_profile'>;

export function writeAiWork(
  extractor: Extractor | undefined,
  payload: WorkPayload,
  chunks: readonly string[] = chunkText(payload.text, payload.chunk_profile ?? 'balanced'),
): WriteAiWork {
  return {
    embedding:
      chunks.length > 0
        ? { embeds: chunks.length, embedTokens: estimateEmbedTokens(chunks) }
        : undefined,
    extraction: extractionWanted(extractor, payload)
      ? extractionCost(extractor, payload.text)
      : undefined,
  };
}

/**
 * Micro-INR a write is estimated to cost before it runs (the AI-cost limits): the price of what
 * {@link reserveWrite} reserves for it, so cost is counted once.
 */
export function estimateWriteCost(
  extractor: Extractor | undefined,
  payload: WorkPayload,
  prices: AiPrices,
): number {
  const work = writeAiWork(extractor, payload);
  return priceWork({ ...work.embedding, ...work.extraction }, prices);
}

/** The resources a refusal names as over their caps; undefined for any other error. */
function overCap(error: unknown): string[] | undefined {
  if (!(error instanceof ServiceError) || error.code !== 'CAP_EXCEEDED') return undefined;
  const over = Object.keys(error.details ?? {});
  return over.length > 0 ? over : undefined;
}

/**
 * Reserves what the write will consume: the write and its stored bytes, the embedding of its
 * chunks, and the extraction call when one would be made. All in one reservation (one round trip,
 * as a write with nothing refused always had), so the parts are granted independently by
 * reserving again without those the refusal names:
 *
 * - `writes` or `storage` over their caps: `CAP_EXCEEDED`, nothing written;
 * - `embeds` or `embed_tokens`: the memory is stored without embeddings;
 * - `extraction_calls` (`plan_limit`) or `gen_tokens` (`budget_limit`): stored without children.
 *
 * `ENTITLEMENT_DEGRADED` and `TRIAL_EXPIRED` are thrown as they come: nothing is written.
 */
export async function reserveWrite(
  deps: Pick<MemoryWriteDeps, 'quota' | 'extractor'>,
  write: PreparedWrite,
): Promise<WriteBudget> {
  const { workspaceId, payload } = write.request;
  const base = {
    workspaceId,
    writes: 1,
    storageBytes: storedBytes(payload.text, write.metadata),
  };
  let { embedding, extraction } = writeAiWork(deps.extractor, payload, write.chunks);
  let embeddingRefused = false;
  let extractionRefused: ExtractionRefusal | undefined;
  // Each retry leaves out at least one part, so this ends after three attempts at most.
  for (;;) {
    try {
      const reservation = await deps.quota.reserve({ ...base, ...embedding, ...extraction });
      return { reservation, embed: !embeddingRefused, extraction, extractionRefused };
    } catch (error) {
      const over = overCap(error);
      const optional = (resource: string) =>
        (embedding !== undefined && EMBEDDING.has(resource)) ||
        (extraction !== undefined && EXTRACTION.has(resource));
      if (!over || !over.every(optional)) throw error;
      if (over.some((resource) => EMBEDDING.has(resource))) {
        embedding = undefined;
        embeddingRefused = true;
      }
      if (over.some((resource) => EXTRACTION.has(resource))) {
        extraction = undefined;
        extractionRefused = over.includes('extraction_calls') ? 'plan_limit' : 'budget_limit';
      }
    }
  }
}

/** The bytes a memory's metadata counts for: its JSON in UTF-8; none when it is empty. */
export function metadataBytes(metadata: Record<string, unknown> | undefined): number {
  if (!metadata || Object.keys(metadata).length === 0) return 0;
  return Buffer.byteLength(JSON.stringify(metadata), 'utf8');
}

/**
 * The bytes a write stores, as the storage cap counts them: its text in UTF-8 and its metadata
 * as JSON (children, which repeat both, are not counted).
 */
export const storedBytes = (text: string, metadata?: Record<string, unknown>): number =>
  Buffer.byteLength(text, 'utf8') + metadataBytes(metadata);

/** What a write that stored something consumed, for the reservation's commit. */
export interface WriteConsumption {
  /** Bytes the stored text grew by: the text's, or (merged) its growth over the previous text. */
  storageBytes: number;
  /** Every text embedded: the chunks, then the children's chunks. */
  embedded: string[];
  /** The extractor was called (whatever it answered). */
  extracted: boolean;
}

/**
 * The actual amounts to commit: the chunks the write really embedded (children's too), and the
 * extraction call only if it was made. Only the parts reserved are named: the others count
 * nothing.
 */
export function consumedAmounts(budget: WriteBudget, used: WriteConsumption): UsageAmounts {
  return {
    storageBytes: used.storageBytes,
    ...(budget.embed
      ? { embeds: used.embedded.length, embedTokens: estimateEmbedTokens(used.embedded) }
      : {}),
    ...(budget.extraction
      ? used.extracted
        ? budget.extraction
        : { extractionCalls: 0, genTokens: 0 }
      : {}),
  };
}

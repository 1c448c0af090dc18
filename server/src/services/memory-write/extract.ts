import {
  DEFAULT_IMPORTANCE,
  type MemoryInsertPayload,
  type MemoryInsertResponse,
} from '@mnemo/contract';
import {
  ExtractionError,
  type ExtractedMemory,
  type Extractor,
  LocalExtractor,
} from '../../providers/extraction/index.js';
import { canonicalHash } from '../../text/canonical.js';
import { estimateExtractionTokens } from '../ai-cost.js';
import { chunkText } from '../chunking.js';

/** Below this importance a memory is not worth splitting into children. */
export const MIN_IMPORTANCE_TO_EXTRACT = 0.1;
/** The spec's cap on child memories per write. */
export const MAX_CHILDREN = 10;

export interface Extraction {
  outcome: MemoryInsertResponse['extraction'];
  children: ExtractedMemory[];
}

/**
 * Why the plan refused the extraction call: `plan_limit`, its daily extraction calls are spent;
 * `budget_limit`, the period's generation tokens are.
 */
export type ExtractionRefusal = 'plan_limit' | 'budget_limit';

type ExtractPayload = Pick<MemoryInsertPayload, 'text' | 'extract' | 'importance'>;

/** Whether {@link extract} would call the extractor, the plan permitting: what to reserve for. */
export function extractionWanted(
  extractor: Extractor | undefined,
  payload: ExtractPayload,
): extractor is Extractor {
  return (
    payload.extract !== false &&
    (payload.importance ?? DEFAULT_IMPORTANCE) >= MIN_IMPORTANCE_TO_EXTRACT &&
    extractor !== undefined
  );
}

/** What one extraction call costs: the call, and a model's generation tokens (rules cost none). */
export function extractionCost(
  extractor: Extractor,
  text: string,
): { extractionCalls: number; genTokens: number } {
  return {
    extractionCalls: 1,
    genTokens: extractor instanceof LocalExtractor ? 0 : estimateExtractionTokens(text),
  };
}

/**
 * The child memories of a memory about to be stored, none restating it or each other. Runs
 * before the transaction (a model call must not hold it open); never fails the write. `refused`:
 * the plan allows no extraction call now, so the parent is stored alone.
 */
export async function extract(
  extractor: Extractor | undefined,
  payload: ExtractPayload,
  refused?: ExtractionRefusal,
): Promise<Extraction> {
  if (payload.extract === false)
    return { outcome: { status: 'skipped', reason: 'user_disabled' }, children: [] };
  if ((payload.importance ?? DEFAULT_IMPORTANCE) < MIN_IMPORTANCE_TO_EXTRACT) {
    return { outcome: { status: 'skipped', reason: 'low_importance' }, children: [] };
  }
  if (!extractor) return { outcome: { status: 'skipped', reason: 'none' }, children: [] };
  if (refused) return { outcome: { status: 'skipped', reason: refused }, children: [] };
  try {
    const found = await extractor.extract(payload.text, { maxItems: MAX_CHILDREN });
    const parent = canonicalHash(payload.text);
    const seen = new Set<string>([parent]);
    const children = found.filter((child) => {
      const hash = canonicalHash(child.text);
      if (seen.has(hash)) return false;
      seen.add(hash);
      return true;
    });
    return { outcome: { status: 'run' }, children: children.slice(0, MAX_CHILDREN) };
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error;
    return {
      outcome: { status: 'degraded', reason: 'extraction_error', error: error.message },
      children: [],
    };
  }
}

/** Each child's chunks: children are short statements, chunked alike whatever the parent's profile. */
export function chunkChildren(children: ExtractedMemory[]): string[][] {
  return children.map((child) => chunkText(child.text, 'balanced'));
}

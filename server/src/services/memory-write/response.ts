import type { MemoryInsertResponse } from '@mnemo/contract';
import { scanPii } from '../../text/pii.js';
import type { PreparedWrite, Safety, WriteRequest } from './types.js';

/** A write that stores no new memory (a duplicate, a merge) has nothing to split. */
export function notExtracted(): MemoryInsertResponse['extraction'] {
  return { status: 'skipped', reason: 'none' };
}

/**
 * What the answer says of the memory's chunks: how many are search-indexed, or (the plan's
 * embedding budget spent) that the row was saved without embeddings, its chunk count omitted.
 */
export function indexedFields(
  chunks: number,
  embedded: boolean,
): Pick<MemoryInsertResponse, 'chunks' | 'embedding'> {
  return embedded ? { chunks } : { embedding: 'skipped_due_to_budget' };
}

/** The PII hints of the text, when the request asked for a scan and it found any. */
export function safetyOf(request: Pick<WriteRequest, 'payload' | 'piiScan'>): Safety {
  const piiHints = request.piiScan ? scanPii(request.payload.text) : [];
  return piiHints.length > 0 ? { safety: { pii_hints: piiHints } } : {};
}

/** What the write learned about the text; `resolved` when it settled a conflict. */
export function intelligenceOf(
  write: Pick<PreparedWrite, 'assessment' | 'contentHash'>,
  resolved: boolean,
): NonNullable<MemoryInsertResponse['intelligence']> {
  const { assessment } = write;
  return {
    canonical_hash: write.contentHash,
    confidence: assessment.confidence,
    source_weight: assessment.sourceWeight,
    priority_score: assessment.priorityScore,
    priority_tier: assessment.priorityTier,
    auto_pinned: assessment.pinned,
    conflict_state: resolved ? 'resolved' : 'none',
  };
}

import type { MemoryInsertPayload, MemoryInsertResponse } from '@mnemo/contract';
import type { AppConfig } from '../../config.js';
import type { Database } from '../../db/client.js';
import type { MemorySpace } from '../../db/queries/memory-writes.js';
import type { NewAuditRecord } from '../../db/schema/index.js';
import type { EmbeddingProvider } from '../../providers/embeddings/index.js';
import type { Extractor } from '../../providers/extraction/index.js';
import type { MemoryAssessment } from '../lifecycle/intelligence.js';
import type { QuotaGate } from '../quota.js';

export interface MemoryWriteDeps {
  db: Database;
  embeddings: EmbeddingProvider;
  quota: QuotaGate;
  config: Pick<AppConfig, 'dedupe' | 'metadataMaxBytes' | 'episodeWindowSeconds'>;
  /** Splits memories into children; undefined: extraction does not run. */
  extractor?: Extractor | undefined;
  /** Told how many rows a committed write added, to keep planner statistics fresh. */
  onRowsWritten?: (rows: number) => void;
}

export interface WriteRequest {
  workspaceId: string;
  payload: MemoryInsertPayload;
  /** `x-safety-pii-scan: 1` */
  piiScan: boolean;
  /** This request's audit record, written in the same transaction as the memory. */
  audit: Pick<
    NewAuditRecord,
    'requestId' | 'workspaceId' | 'apiKeyId' | 'method' | 'path' | 'route' | 'ip' | 'userAgent'
  > & {
    startedAt: bigint;
  };
}

export interface WriteResult {
  response: MemoryInsertResponse;
  /** False when nothing was written (an idempotent replay): the caller audits as usual. */
  audited: boolean;
}

/** A request and what it implies on its own, worked out once before the database is asked. */
export interface PreparedWrite {
  request: WriteRequest;
  space: MemorySpace;
  /** Of the canonical text: finds exact duplicates and keys the lock on the space's content. */
  contentHash: string;
  idempotencyKey: string | undefined;
  /** Tells a retry from another payload under the same key; '' without a key. */
  requestHash: string;
  replacesId: string | undefined;
  /** One clock reading for the whole write, so the parent and its children agree. */
  now: Date;
  memoryType: NonNullable<MemoryInsertPayload['memory_type']>;
  importance: number;
  metadata: NonNullable<MemoryInsertPayload['metadata']>;
  effectiveAt: Date | null;
  assessment: MemoryAssessment;
  chunks: string[];
}

/** The PII hints a response carries: empty unless the request asked for a scan that found some. */
export type Safety = Pick<MemoryInsertResponse, 'safety'>;

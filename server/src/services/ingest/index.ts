import { createHash } from 'node:crypto';
import {
  INGEST_LIMITS,
  splitDocumentSections,
  splitSectionPieces,
  type DocumentIngestPayload,
  type DocumentIngestResponse,
  type IngestPayload,
  type IngestResponse,
  type MemoryInsertPayload,
} from '@mnemo/contract';
import { ServiceError } from '../../errors.js';
import type { Extractor } from '../../providers/extraction/index.js';
import type { AiPrices } from '../ai-cost.js';
import { estimateWriteCost } from '../memory-write/budget.js';
import { ingestConversation } from './conversation.js';
import {
  derivedKey,
  sharedWriteFields,
  tooManyItems,
  writeItems,
  type IngestRequest,
  type IngestResult,
} from './items.js';
import { writeMemory, type MemoryWriteDeps } from '../memory-write/index.js';

export type { IngestRequest, IngestResult } from './items.js';

/**
 * A document as memories: cut into sections at its headings (see `splitDocumentSections`), each
 * section into pieces of whole paragraphs up to `max_piece_chars`; one memory per piece, chunked
 * with the `document` profile, its source kept in the metadata (document id, title, source,
 * section number and title, piece n of m of its section). Extraction is off unless asked for:
 * a document would otherwise spend a model call per piece.
 */
export async function ingestDocument(
  deps: MemoryWriteDeps,
  request: IngestRequest,
  payload: DocumentIngestPayload,
): Promise<IngestResult<DocumentIngestResponse>> {
  const sections = splitDocumentSections(payload.text).map((section) =>
    // Text before the first heading continues the section an earlier request ended in.
    section.title === '' && payload.section_title
      ? { ...section, title: payload.section_title }
      : section,
  );
  if (sections.length === 0) {
    throw new ServiceError('BAD_REQUEST', 'The document has no text', { text: ['is blank'] });
  }
  const maxPiece = payload.max_piece_chars ?? INGEST_LIMITS.pieceChars.default;
  const offset = payload.section_offset ?? 0;
  const documentId =
    payload.document_id ?? createHash('sha256').update(payload.text).digest('hex').slice(0, 16);
  const shared = sharedWriteFields({ ...payload, extract: payload.extract ?? false });

  const items: Array<{
    payload: MemoryInsertPayload;
    details: { section_index: number; section_title: string; piece: number; pieces: number };
  }> = [];
  sections.forEach((section, s) => {
    const pieces = splitSectionPieces(section.text, maxPiece);
    pieces.forEach((text, p) => {
      const details = {
        section_index: offset + s,
        section_title: section.title,
        piece: p + 1,
        pieces: pieces.length,
      };
      const write: MemoryInsertPayload = {
        ...shared,
        text,
        chunk_profile: 'document',
        metadata: {
          ...payload.metadata,
          ingest: 'document',
          document_id: documentId,
          ...(payload.title ? { title: payload.title } : {}),
          ...(payload.source ? { source: payload.source } : {}),
          ...details,
        },
        ...(payload.effective_at ? { effective_at: payload.effective_at } : {}),
      };
      const label = `s${details.section_index}p${details.piece}`;
      items.push({
        payload: payload.idempotency_key
          ? { ...write, idempotency_key: derivedKey(payload.idempotency_key, label, write) }
          : write,
        details,
      });
    });
  });
  if (items.length > INGEST_LIMITS.items.max) throw tooManyItems(items.length, 'pieces');
  const { counts, results, audited } = await writeItems(deps, request, items);
  return {
    response: { ...counts, document_id: documentId, sections: sections.length, items: results },
    audited,
  };
}

/** POST /v1/ingest: a memory, a conversation or a document, by `type`. */
export async function ingest(
  deps: MemoryWriteDeps,
  request: IngestRequest,
  payload: IngestPayload,
): Promise<IngestResult<IngestResponse>> {
  switch (payload.type) {
    case 'memory': {
      const { type, ...write } = payload;
      const result = await writeMemory(deps, { ...request, payload: write });
      return { response: { type, result: result.response }, audited: result.audited };
    }
    case 'conversation': {
      const { type, ...conversation } = payload;
      const result = await ingestConversation(deps, request, conversation);
      return { response: { type, ...result.response }, audited: result.audited };
    }
    case 'document': {
      const { type, ...document } = payload;
      const result = await ingestDocument(deps, request, document);
      return { response: { type, ...result.response }, audited: result.audited };
    }
  }
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/**
 * The AI cost of an ingest request, estimated from its raw body before validation: every text it
 * carries is embedded; conversation turns are extracted unless `extract` is false, document
 * pieces only when it is true. Each message (or transcript line) counts as one write: an upper
 * bound on the turns.
 */
export function estimateIngestCost(
  body: Record<string, unknown>,
  kind: 'conversation' | 'ingest',
  extractor: Extractor | undefined,
  prices: AiPrices,
): number {
  const type = kind === 'conversation' ? 'conversation' : body.type;
  if (type === 'memory') {
    return estimateWriteCost(extractor, { ...body, text: text(body.text) }, prices);
  }
  if (type === 'document') {
    return estimateWriteCost(
      extractor,
      { ...body, text: text(body.text), extract: body.extract === true },
      prices,
    );
  }
  if (type !== 'conversation') return 0;
  const extract = body.extract !== false;
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  const texts = messages.map((m) =>
    m && typeof m === 'object' ? text((m as Record<string, unknown>).content) : '',
  );
  // A transcript line may be a turn of its own.
  if (typeof body.transcript === 'string') {
    texts.push(...body.transcript.split('\n').filter((line) => line.trim() !== ''));
  }
  return texts.reduce(
    (sum, t) => sum + estimateWriteCost(extractor, { text: t, extract }, prices),
    0,
  );
}

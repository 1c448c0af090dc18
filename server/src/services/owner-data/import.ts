import { createHash } from 'node:crypto';
import {
  EXPORT_FORMAT_VERSION,
  ExportHeader,
  ExportLine,
  type ExportMemory,
  type ImportResponse,
} from '@mnemo/contract';
import type { ZodError } from 'zod';
import type { Writer } from '../../db/client.js';
import {
  insertImportBatch,
  ownersOfIds,
  usedIdempotencyKeys,
  type ImportedCounts,
  type ImportRows,
} from '../../db/queries/owner-data.js';
import type { Queryable } from '../../db/queries/statement.js';
import { ServiceError } from '../../errors.js';
import type { EmbeddingProvider } from '../../providers/embeddings/index.js';
import { estimateEmbedTokens } from '../ai-cost.js';
import { deadlineExpired, fencedCommit } from '../deadline-fence.js';
import { embed } from '../memory-write/embed.js';
import { storedBytes } from '../memory-write/budget.js';
import type { QuotaGate } from '../quota.js';

/** Memory lines per transaction: a failure (or the deadline) loses at most one batch's work. */
export const IMPORT_BATCH_SIZE = 100;

export interface ImportDeps {
  db: Writer;
  embeddings: EmbeddingProvider;
  quota: QuotaGate;
  onRowsWritten(rows: number): void;
}

interface NumberedMemory {
  line: number;
  memory: ExportMemory;
}

/** The first issue of a line, as `path: message`. */
function describe(error: ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : WHOLE_LINE;
  return { field, message: issue?.message ?? 'invalid' };
}

/** The `details` key of a problem with a line as a whole (not JSON, out of place). */
const WHOLE_LINE = 'record';

function badLine(line: number, field: string, message: string): ServiceError {
  return new ServiceError(
    'BAD_REQUEST',
    `Line ${line}: ${field === WHOLE_LINE ? message : `${field}: ${message}`}. Nothing of this request was written.`,
    { line: [String(line)], [field]: [message] },
  );
}

/**
 * Reads and checks every line of the body before anything is written, so a bad line writes
 * nothing of the request: the header first (format and version), then memory lines; an end line
 * may close the file. Lines are numbered as in the file (`lineOffset` is added to those after the
 * header when the file came in several requests).
 */
export function parseImportBody(body: string, lineOffset: number): NumberedMemory[] {
  const lines = body.split('\n');
  const fileLine = (index: number) => (index === 0 ? 1 : index + 1 + lineOffset);
  const firstText = lines[0]?.trim() ?? '';
  if (firstText === '') throw badLine(1, WHOLE_LINE, 'the first line must be the export header');
  let first: unknown;
  try {
    first = JSON.parse(firstText);
  } catch {
    throw badLine(1, WHOLE_LINE, 'not valid JSON');
  }
  const header = ExportHeader.safeParse(first);
  if (!header.success) {
    const { field, message } = describe(header.error);
    throw badLine(1, field, `${message} (the first line must be the export header)`);
  }
  if (header.data.version > EXPORT_FORMAT_VERSION) {
    throw badLine(
      1,
      'version',
      `format version ${header.data.version} is newer than this server reads (${EXPORT_FORMAT_VERSION})`,
    );
  }
  const memories: NumberedMemory[] = [];
  let ended = false;
  for (let index = 1; index < lines.length; index++) {
    const text = lines[index]!.trim();
    if (text === '') continue;
    const line = fileLine(index);
    if (ended) throw badLine(line, WHOLE_LINE, 'nothing may follow the end line');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw badLine(line, WHOLE_LINE, 'not valid JSON');
    }
    const parsed = ExportLine.safeParse(value);
    if (!parsed.success) {
      const { field, message } = describe(parsed.error);
      throw badLine(line, field, message);
    }
    if (parsed.data.type === 'header') throw badLine(line, 'type', 'a second header line');
    if (parsed.data.type === 'end') {
      ended = true;
      continue;
    }
    memories.push({ line, memory: parsed.data });
  }
  return memories;
}

/**
 * The id a row takes in this workspace: its own, unless another workspace of this server holds
 * it (ids are unique server-wide); then one derived from the workspace and the id, the same on
 * every import, so a second import finds what the first one wrote.
 */
export function derivedId(workspaceId: string, id: string): string {
  const hex = createHash('sha256').update(`mnemo-import:${workspaceId}:${id}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Maps ids of one table: an id another workspace holds becomes {@link derivedId}. */
async function idMapper(
  db: Queryable,
  workspaceId: string,
  table: Parameters<typeof ownersOfIds>[1],
  ids: Iterable<string>,
) {
  const owners = await ownersOfIds(db, table, [...new Set(ids)]);
  const map = (id: string) => {
    const owner = owners.get(id);
    return owner === undefined || owner === workspaceId ? id : derivedId(workspaceId, id);
  };
  const derived = [...owners.entries()]
    .filter(([, owner]) => owner !== workspaceId)
    .map(([id]) => derivedId(workspaceId, id));
  const derivedOwners = await ownersOfIds(db, table, derived);
  /** Whether the mapped id is already in this workspace. */
  const present = (mapped: string) =>
    (owners.get(mapped) ?? derivedOwners.get(mapped)) === workspaceId;
  return { map, present, remapped: (id: string) => map(id) !== id };
}

interface BatchPlan {
  rows: ImportRows;
  skipped: number;
  remapped: number;
  /** Chunks to embed before the write, by their row. */
  toEmbed: Array<{ row: ImportRows['chunks'][number]; text: string }>;
  storageBytes: number;
}

/** What one batch writes: ids mapped, rows already present left out, references kept valid. */
async function planBatch(
  db: Queryable,
  workspaceId: string,
  batch: NumberedMemory[],
  embedder: EmbeddingProvider,
): Promise<BatchPlan> {
  const records = batch.map((item) => item.memory);
  const memoryIds = new Set<string>();
  for (const m of records) {
    memoryIds.add(m.id);
    for (const id of [m.parent_memory_id, m.replaced_by_memory_id]) if (id) memoryIds.add(id);
    for (const id of [...m.child_memory_ids, ...m.replaces_memory_ids]) memoryIds.add(id);
    for (const link of m.links) memoryIds.add(link.source_memory_id).add(link.target_memory_id);
    for (const event of m.events)
      if (event.related_memory_id) memoryIds.add(event.related_memory_id);
  }
  const memoryMap = await idMapper(db, workspaceId, 'memories', memoryIds);
  const chunkMap = await idMapper(
    db,
    workspaceId,
    'memory_chunks',
    records.flatMap((m) => m.chunks.map((c) => c.id)),
  );
  const eventMap = await idMapper(
    db,
    workspaceId,
    'domain_events',
    records.flatMap((m) => m.events.map((e) => e.id)),
  );
  const linkMap = await idMapper(
    db,
    workspaceId,
    'memory_links',
    records.flatMap((m) => m.links.map((l) => l.id)),
  );
  const pinMap = await idMapper(
    db,
    workspaceId,
    'memory_pins',
    records.flatMap((m) => (m.profile_pin ? [m.profile_pin.id] : [])),
  );
  const m = memoryMap.map;
  const fresh = records.filter((record) => !memoryMap.present(m(record.id)));
  const inBatch = new Set(fresh.map((record) => m(record.id)));
  const reachable = (id: string | null) =>
    id !== null && (inBatch.has(m(id)) || memoryMap.present(m(id))) ? m(id) : null;
  const takenKeys = await usedIdempotencyKeys(
    db,
    workspaceId,
    fresh.flatMap((record) => (record.idempotency_key ? [record.idempotency_key] : [])),
  );

  const rows: ImportRows = {
    memories: [],
    chunks: [],
    events: [],
    links: [],
    pins: [],
    parentOf: [],
    replacedBy: [],
  };
  const toEmbed: BatchPlan['toEmbed'] = [];
  let storageBytes = 0;
  const seenKeys = new Set<string>();
  for (const record of fresh) {
    const id = m(record.id);
    // A key another memory of this workspace already uses would refuse the row: dropped instead.
    const key =
      record.idempotency_key &&
      !takenKeys.has(record.idempotency_key) &&
      !seenKeys.has(record.idempotency_key)
        ? record.idempotency_key
        : null;
    if (key) seenKeys.add(key);
    storageBytes += storedBytes(record.text);
    rows.memories.push({
      id,
      workspaceId,
      ownerId: record.owner_id,
      ownerType: record.owner_type,
      scope: record.scope,
      namespace: record.namespace,
      containerTag: record.container_tag,
      text: record.text,
      metadata: record.metadata,
      memoryType: record.memory_type,
      importance: record.importance,
      chunkProfile: record.chunk_profile,
      lifecycleState: record.lifecycle_state,
      archiveRule: record.archive_rule,
      confidence: record.confidence,
      volatility: record.volatility,
      expiresAt: record.expires_at ? new Date(record.expires_at) : null,
      effectiveAt: record.effective_at ? new Date(record.effective_at) : null,
      contentHash: record.content_hash,
      feedbackScore: record.feedback_score,
      claims: record.claims,
      claimKeys: record.claim_keys,
      pinned: record.pinned,
      sourceWeight: record.source_weight,
      priorityScore: record.priority_score,
      idempotencyKey: key,
      parentMemoryId: reachable(record.parent_memory_id),
      replacedByMemoryId: reachable(record.replaced_by_memory_id),
      createdAt: new Date(record.created_at),
      updatedAt: new Date(record.updated_at),
    });
    for (const chunk of record.chunks) {
      const sameEmbedder =
        Array.isArray(chunk.embedding) &&
        chunk.embedding_provider === embedder.provider &&
        chunk.embedding_dimension === embedder.dimension &&
        chunk.embedding_version === embedder.version;
      const row: ImportRows['chunks'][number] = {
        id: chunkMap.map(chunk.id),
        memoryId: id,
        workspaceId,
        ownerId: record.owner_id,
        ownerType: record.owner_type,
        chunkIndex: chunk.chunk_index,
        text: chunk.text,
        embedding: sameEmbedder ? chunk.embedding! : null,
        embeddingProvider: sameEmbedder ? chunk.embedding_provider : null,
        embeddingDimension: sameEmbedder ? chunk.embedding_dimension : null,
        embeddingVersion: sameEmbedder ? chunk.embedding_version : null,
        createdAt: new Date(chunk.created_at),
      };
      if (!sameEmbedder) toEmbed.push({ row, text: chunk.text });
      rows.chunks.push(row);
    }
    for (const event of record.events) {
      rows.events.push({
        id: eventMap.map(event.id),
        workspaceId,
        kind: event.kind,
        memoryId: id,
        rule: event.rule,
        relatedMemoryId: event.related_memory_id ? m(event.related_memory_id) : null,
        details: event.details,
        createdAt: new Date(event.created_at),
      });
    }
  }
  // Links, pins and the reverse side of references: also for memories already present, whose
  // other ends may have arrived since.
  for (const record of records) {
    const id = m(record.id);
    for (const link of record.links) {
      rows.links.push({
        id: linkMap.map(link.id),
        workspaceId,
        sourceMemoryId: m(link.source_memory_id),
        targetMemoryId: m(link.target_memory_id),
        relation: link.relation,
        createdAt: new Date(link.created_at),
      });
    }
    if (record.profile_pin) {
      rows.pins.push({
        id: pinMap.map(record.profile_pin.id),
        workspaceId,
        ownerId: record.owner_id,
        ownerType: record.owner_type,
        memoryId: id,
        createdAt: new Date(record.profile_pin.created_at),
      });
    }
    for (const child of record.child_memory_ids)
      rows.parentOf.push({ childId: m(child), parentId: id });
    for (const old of record.replaces_memory_ids)
      rows.replacedBy.push({ id: m(old), replacedById: id });
    if (record.parent_memory_id)
      rows.parentOf.push({ childId: id, parentId: m(record.parent_memory_id) });
    if (record.replaced_by_memory_id) {
      rows.replacedBy.push({ id, replacedById: m(record.replaced_by_memory_id) });
    }
  }
  return {
    rows,
    skipped: records.length - fresh.length,
    remapped: fresh.filter((record) => memoryMap.remapped(record.id)).length,
    toEmbed,
    storageBytes,
  };
}

/**
 * Imports the lines of an export into the workspace, batch by batch, each batch one transaction
 * (metered like writes before it starts). Rows keep their ids and timestamps, history events
 * included; rows already present are left as they are, so importing twice changes nothing.
 * Chunks without an embedding of this server's embedder are embedded again. When the request
 * deadline passes between batches, the answer says where to resume.
 */
export async function importLines(
  deps: ImportDeps,
  workspaceId: string,
  body: string,
  lineOffset = 0,
): Promise<ImportResponse> {
  const items = parseImportBody(body, lineOffset);
  const imported: ImportedCounts = { memories: 0, chunks: 0, events: 0, links: 0, pins: 0 };
  const result: ImportResponse = {
    imported,
    skipped: 0,
    remapped: 0,
    reembedded: 0,
    lines: items.length,
    batches: 0,
    complete: true,
  };
  for (let start = 0; start < items.length; start += IMPORT_BATCH_SIZE) {
    const batch = items.slice(start, start + IMPORT_BATCH_SIZE);
    if (result.batches > 0 && deadlineExpired()) return stopped(result, batch);
    const plan = await planBatch(deps.db, workspaceId, batch, deps.embeddings);
    const texts = plan.toEmbed.map((item) => item.text);
    const reservation = await deps.quota.reserve({
      workspaceId,
      writes: plan.rows.memories.length,
      storageBytes: plan.storageBytes,
      ...(texts.length > 0
        ? { embeds: texts.length, embedTokens: estimateEmbedTokens(texts) }
        : {}),
    });
    let counts: ImportedCounts;
    try {
      if (texts.length > 0) {
        const vectors = await embed(deps.embeddings, texts);
        plan.toEmbed.forEach(({ row }, index) => {
          row.embedding = vectors[index] ?? null;
          row.embeddingProvider = deps.embeddings.provider;
          row.embeddingDimension = deps.embeddings.dimension;
          row.embeddingVersion = deps.embeddings.version;
        });
      }
      counts = await fencedCommit(() =>
        deps.db.transaction((tx) => insertImportBatch(tx, workspaceId, plan.rows)),
      );
    } catch (error) {
      await reservation.release();
      if (result.batches > 0 && error instanceof ServiceError && deadlineExpired()) {
        return stopped(result, batch);
      }
      throw error;
    }
    await reservation.commit({ writes: counts.memories });
    deps.onRowsWritten(counts.memories + counts.chunks + counts.events + counts.links);
    for (const key of Object.keys(imported) as Array<keyof ImportedCounts>) {
      imported[key] += counts[key];
    }
    result.skipped += plan.skipped;
    result.remapped += plan.remapped;
    result.reembedded += texts.length;
    result.batches += 1;
  }
  return result;
}

function stopped(result: ImportResponse, batch: NumberedMemory[]): ImportResponse {
  return { ...result, complete: false, resume_line: batch[0]!.line };
}

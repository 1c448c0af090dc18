import {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type ExportEnd,
  type ExportHeader,
  type ExportLine,
  type ExportMemory,
  type ExportQuery,
  type OwnerType,
} from '@mnemo/contract';
import type { Reader } from '../../db/client.js';
import { readExportPage, type ExportPage, type OwnerKey } from '../../db/queries/owner-data.js';
import { resolveOwner } from '../owner.js';

/** Memories read per query: a page's lines are all that is held in memory at once. */
const PAGE_SIZE = 200;

export interface OpenExport {
  /** The lines, header first and end last; read the database page by page as they are consumed. */
  lines: AsyncIterable<ExportLine>;
}

/**
 * Starts an export: the first page is read before anything is sent, so a failure to read at all
 * is an error answer rather than a cut stream. Then lines go out as pages are read (id order,
 * after the cursor), never the whole owner at once; the end line carries the cursor to resume
 * from, so a cut stream is told apart by its missing end line.
 */
export async function openExport(
  db: Reader,
  workspaceId: string,
  query: ExportQuery,
  now: Date,
): Promise<OpenExport> {
  const owner: (OwnerKey & { ownerType: OwnerType }) | null =
    query.all_owners === true ? null : resolveOwner(query);
  const embeddings = query.embeddings ?? true;
  const limit = query.limit ?? Number.POSITIVE_INFINITY;
  const read = (after: string | null, count: number) =>
    readExportPage(db, workspaceId, owner, { after, limit: count, embeddings });
  const firstAsked = Math.min(PAGE_SIZE, limit);
  const first = await read(query.after ?? null, firstAsked);
  const header: ExportHeader = {
    type: 'header',
    format: EXPORT_FORMAT,
    version: EXPORT_FORMAT_VERSION,
    exported_at: now.toISOString(),
    owner: owner ? { owner_id: owner.ownerId, owner_type: owner.ownerType } : null,
    embeddings,
    after: query.after ?? null,
  };
  async function* lines(): AsyncGenerator<ExportLine> {
    yield header;
    let page: ExportPage = first;
    let asked = firstAsked;
    let sent = 0;
    let last: string | null = query.after ?? null;
    let complete = true;
    for (;;) {
      for (const line of toMemoryLines(page)) {
        yield line;
        last = line.id;
        sent += 1;
      }
      // A short page is the last one.
      if (page.memories.length < asked) break;
      if (sent >= limit) {
        // The limit is reached: one more row tells whether anything is left.
        const more = await readExportPage(db, workspaceId, owner, {
          after: last,
          limit: 1,
          embeddings: false,
        });
        complete = more.memories.length === 0;
        break;
      }
      asked = Math.min(PAGE_SIZE, limit - sent);
      page = await read(last, asked);
    }
    yield { type: 'end', memories: sent, complete, next_after: last } satisfies ExportEnd;
  }
  return { lines: lines() };
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

function toMemoryLines(page: ExportPage): ExportMemory[] {
  const group = <T>(rows: T[], key: (row: T) => string | null) => {
    const map = new Map<string, T[]>();
    for (const row of rows) {
      const k = key(row);
      if (k === null) continue;
      const list = map.get(k);
      if (list) list.push(row);
      else map.set(k, [row]);
    }
    return map;
  };
  const chunks = group(page.chunks, (row) => row.memoryId);
  const events = group(page.events, (row) => row.memoryId);
  const pins = group(page.pins, (row) => row.memoryId);
  const children = group(page.children, (row) => row.parentId);
  const replaced = group(page.replaced, (row) => row.replacedById);
  const links = new Map<string, typeof page.links>();
  for (const link of page.links) {
    for (const end of new Set([link.sourceMemoryId, link.targetMemoryId])) {
      const list = links.get(end) ?? [];
      list.push(link);
      links.set(end, list);
    }
  }
  return page.memories.map((row) => {
    const pin = pins
      .get(row.id)
      ?.find((p) => p.ownerId === row.ownerId && p.ownerType === row.ownerType);
    return {
      type: 'memory',
      id: row.id,
      owner_id: row.ownerId,
      owner_type: row.ownerType as ExportMemory['owner_type'],
      scope: row.scope,
      namespace: row.namespace,
      container_tag: row.containerTag,
      text: row.text,
      metadata: row.metadata,
      memory_type: row.memoryType as ExportMemory['memory_type'],
      importance: row.importance,
      chunk_profile: row.chunkProfile as ExportMemory['chunk_profile'],
      lifecycle_state: row.lifecycleState as ExportMemory['lifecycle_state'],
      archive_rule: row.archiveRule,
      confidence: row.confidence,
      volatility: row.volatility,
      expires_at: iso(row.expiresAt),
      effective_at: iso(row.effectiveAt),
      content_hash: row.contentHash,
      feedback_score: row.feedbackScore,
      claims: row.claims,
      claim_keys: row.claimKeys,
      pinned: row.pinned,
      source_weight: row.sourceWeight,
      priority_score: row.priorityScore,
      idempotency_key: row.idempotencyKey,
      parent_memory_id: row.parentMemoryId,
      child_memory_ids: (children.get(row.id) ?? []).map((child) => child.id),
      replaced_by_memory_id: row.replacedByMemoryId,
      replaces_memory_ids: (replaced.get(row.id) ?? []).map((old) => old.id),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      chunks: (chunks.get(row.id) ?? []).map((chunk) => ({
        id: chunk.id,
        chunk_index: chunk.chunkIndex,
        text: chunk.text,
        embedding: chunk.embedding,
        embedding_provider: chunk.embeddingProvider,
        embedding_dimension: chunk.embeddingDimension,
        embedding_version: chunk.embeddingVersion,
        created_at: chunk.createdAt.toISOString(),
      })),
      events: (events.get(row.id) ?? []).map((event) => ({
        id: event.id,
        kind: event.kind as ExportMemory['events'][number]['kind'],
        rule: event.rule,
        related_memory_id: event.relatedMemoryId,
        details: event.details,
        created_at: event.createdAt.toISOString(),
      })),
      links: (links.get(row.id) ?? []).map((link) => ({
        id: link.id,
        source_memory_id: link.sourceMemoryId,
        target_memory_id: link.targetMemoryId,
        relation: link.relation,
        created_at: link.createdAt.toISOString(),
      })),
      profile_pin: pin ? { id: pin.id, created_at: pin.createdAt.toISOString() } : null,
    };
  });
}

import type { Database } from '../db/client.js';
import { eventOutbox, type DomainEvent } from '../db/queries/events.js';
import {
  findExpired,
  liveMemoriesOfCrowdedSpaces,
  markMemoryState,
  type DuplicateCandidate,
} from '../db/queries/lifecycle.js';
import { lexicalSimilarity } from '../text/canonical.js';

export interface HygieneOptions {
  dryRun: boolean;
  /** Most memories examined by each pass. */
  limit: number;
  workspaceId?: string;
  nearThreshold: number;
}

export interface HygieneReport {
  dry_run: boolean;
  expired: { count: number; memory_ids: string[] };
  duplicates: {
    count: number;
    superseded: Array<{ memory_id: string; kept_memory_id: string; similarity: number }>;
  };
  scanned: number;
}

const spaceKey = (m: DuplicateCandidate) =>
  JSON.stringify([m.workspaceId, m.ownerType, m.ownerId, m.scope, m.namespace, m.containerTag]);

/** Pairs are compared within one space only, and at most this many members of a space. */
const MAX_GROUP = 300;

/**
 * Memory hygiene: archives live memories whose `expires_at` has passed, and supersedes near
 * duplicates within each space (same canonical text or word/word-pair Jaccard ≥ the near
 * threshold; the oldest is kept). With `dryRun` it only reports. Every change is recorded as a
 * lifecycle event.
 */
export async function runHygiene(db: Database, options: HygieneOptions): Promise<HygieneReport> {
  const scope = options.workspaceId ? { workspaceId: options.workspaceId } : {};
  const expired = await findExpired(db, { ...scope, limit: options.limit });

  const live = await liveMemoriesOfCrowdedSpaces(db, { ...scope, limit: options.limit });
  const groups = new Map<string, DuplicateCandidate[]>();
  for (const memory of live) {
    const key = spaceKey(memory);
    const group = groups.get(key) ?? [];
    if (group.length < MAX_GROUP) group.push(memory);
    groups.set(key, group);
  }
  const expiredIds = new Set(expired.map((m) => m.id));
  const superseded: HygieneReport['duplicates']['superseded'] = [];
  for (const group of groups.values()) {
    const kept: DuplicateCandidate[] = [];
    for (const memory of group) {
      if (expiredIds.has(memory.id)) continue;
      let match: { keptId: string; similarity: number } | undefined;
      for (const older of kept) {
        const similarity =
          older.contentHash === memory.contentHash ? 1 : lexicalSimilarity(older.text, memory.text);
        if (similarity >= options.nearThreshold) {
          match = { keptId: older.id, similarity: Math.round(similarity * 1000) / 1000 };
          break;
        }
      }
      if (match)
        superseded.push({
          memory_id: memory.id,
          kept_memory_id: match.keptId,
          similarity: match.similarity,
        });
      else kept.push(memory);
    }
  }

  if (!options.dryRun && (expired.length > 0 || superseded.length > 0)) {
    await db.transaction(async (tx) => {
      for (const memory of expired)
        await markMemoryState(tx, memory.id, { state: 'archived', rule: 'expiry' });
      for (const duplicate of superseded)
        await markMemoryState(tx, duplicate.memory_id, {
          state: 'replaced',
          replacedBy: duplicate.kept_memory_id,
        });
      const workspaceOf = new Map(live.map((m) => [m.id, m.workspaceId]));
      await eventOutbox.emit(tx, [
        ...expired.map((memory): DomainEvent => ({
          kind: 'archived',
          workspaceId: memory.workspaceId,
          memoryId: memory.id,
          rule: 'expiry',
          details: { expires_at: memory.expiresAt?.toISOString() ?? null },
        })),
        ...superseded.map((duplicate): DomainEvent => ({
          kind: 'replaced',
          workspaceId: workspaceOf.get(duplicate.memory_id) ?? '',
          memoryId: duplicate.memory_id,
          rule: 'hygiene_duplicate',
          relatedMemoryId: duplicate.kept_memory_id,
          details: { similarity: duplicate.similarity },
        })),
      ]);
    });
  }

  return {
    dry_run: options.dryRun,
    expired: { count: expired.length, memory_ids: expired.map((m) => m.id) },
    duplicates: { count: superseded.length, superseded },
    scanned: live.length,
  };
}

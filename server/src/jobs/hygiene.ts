import type { Database } from '../db/client.js';
import type { DomainEvent, EventOutbox } from '../db/queries/events.js';
import {
  archiveExpired,
  findExpired,
  liveMemoriesPage,
  supersedeBy,
  type DuplicateCandidate,
  type ExpiredMemory,
} from '../db/queries/lifecycle.js';
import { shingleSimilarity, wordShingles } from '../text/canonical.js';
import { JobPace } from './pacing.js';

/** Rows one hygiene step reads, and changes in one transaction. */
export const HYGIENE_BATCH = 200;

/** The wall-clock budget of a run when none is given (`MNEMO_JOB_BUDGET_MS`). */
export const DEFAULT_HYGIENE_BUDGET_MS = 30_000;

/** Pairs are compared within one space only, and at most this many members of a space. */
const MAX_GROUP = 300;

export interface HygieneOptions {
  dryRun: boolean;
  /** Most memories examined by each pass. */
  limit: number;
  workspaceId?: string;
  nearThreshold: number;
  /** Wall-clock budget of the run (0: unbounded): past it no new batch starts. */
  budgetMs?: number;
  /** Rows per batch ({@link HYGIENE_BATCH}). */
  batchSize?: number;
  /**
   * Where the duplicate scan resumes, kept by the caller across runs (the schedule): a run that
   * stops at its limit or budget leaves it where the next should start, so every memory is
   * reached in turn. Without it each run starts at the first owner.
   */
  cursor?: HygieneCursor;
}

/** Where hygiene reads and changes memories, and the port its lifecycle events go through. */
export interface HygienePorts {
  db: Database;
  /** The operations' own events port: each change's events land in the change's transaction. */
  events: EventOutbox;
}

export interface HygieneCursor {
  after?: DuplicateCandidate | undefined;
}

export interface HygieneReport {
  dry_run: boolean;
  expired: { count: number; memory_ids: string[] };
  duplicates: {
    count: number;
    superseded: Superseded[];
  };
  scanned: number;
  /** The run stopped at its time budget; the next run carries on. */
  budget_exhausted: boolean;
}

interface Superseded {
  memory_id: string;
  kept_memory_id: string;
  similarity: number;
}

interface Compared {
  memory: DuplicateCandidate;
  shingles: Set<string>;
}

/**
 * Memory hygiene: archives live memories whose `expires_at` has passed, and supersedes near
 * duplicates within each space (same canonical text or word/word-pair Jaccard ≥ the near
 * threshold; the oldest is kept). With `dryRun` it only reports. Every change is recorded as a
 * lifecycle event.
 *
 * It shares the process with the requests it serves: it reads and changes {@link HYGIENE_BATCH}
 * rows at a time (one short transaction each, never one for the whole run), gives the event loop
 * back between steps ({@link JobPace}), and starts no batch once `budgetMs` is spent.
 */
export async function runHygiene(
  { db, events }: HygienePorts,
  options: HygieneOptions,
): Promise<HygieneReport> {
  const pace = new JobPace(options.budgetMs ?? DEFAULT_HYGIENE_BUDGET_MS);
  const batchSize = options.batchSize ?? HYGIENE_BATCH;
  const scope = options.workspaceId ? { workspaceId: options.workspaceId } : {};
  const now = new Date();

  const expired: ExpiredMemory[] = [];
  let examined = 0;
  let afterExpired: ExpiredMemory | undefined;
  let expiryDone = false;
  while (examined < options.limit && !pace.spent) {
    const want = Math.min(batchSize, options.limit - examined);
    const page = await findExpired(db, {
      ...scope,
      now,
      limit: want,
      ...(afterExpired ? { after: afterExpired } : {}),
    });
    examined += page.length;
    afterExpired = page.at(-1);
    expired.push(...(options.dryRun ? page : await archivePage(db, events, page)));
    if ((expiryDone = page.length < want)) break;
    await pace.yield();
  }

  const superseded: Superseded[] = [];
  let scanned = 0;
  // Where this run's scan is, and the last memory of the last owner it went all through.
  let afterLive = options.cursor?.after;
  let ownerDoneAt: DuplicateCandidate | undefined;
  let previous: DuplicateCandidate | undefined;
  let owner: string | undefined;
  let spaces = new Map<string, { seen: number; kept: Compared[] }>();
  let scanDone = false;
  while (scanned < options.limit && !pace.spent) {
    const want = Math.min(batchSize, options.limit - scanned);
    const page = await liveMemoriesPage(db, {
      ...scope,
      now,
      limit: want,
      ...(afterLive ? { after: afterLive } : {}),
    });
    scanned += page.length;
    afterLive = page.at(-1) ?? afterLive;
    const found: Superseded[] = [];
    for (const memory of page) {
      const ownerKey = JSON.stringify([memory.workspaceId, memory.ownerType, memory.ownerId]);
      if (ownerKey !== owner) {
        // The previous owner's spaces are complete: none of their members comes later.
        if (owner !== undefined) ownerDoneAt = previous;
        owner = ownerKey;
        spaces = new Map();
      }
      previous = memory;
      const key = JSON.stringify([memory.scope, memory.namespace, memory.containerTag]);
      const space = spaces.get(key) ?? { seen: 0, kept: [] };
      spaces.set(key, space);
      space.seen += 1;
      if (space.seen > MAX_GROUP) continue;
      const match = oldestMatch(space.kept, memory, options.nearThreshold);
      if (match) found.push(match);
      else space.kept.push({ memory, shingles: wordShingles(memory.text) });
      await pace.yield();
    }
    superseded.push(...(options.dryRun ? found : await supersedePage(db, events, page, found)));
    if ((scanDone = page.length < want)) break;
    await pace.yield();
  }
  if (options.cursor) {
    // The next run starts with the owner this one was in the middle of (so its spaces are
    // compared whole), or after what this one read if it never got past one owner; after the
    // last memory, from the beginning again.
    options.cursor.after = scanDone ? undefined : (ownerDoneAt ?? afterLive);
  }

  return {
    dry_run: options.dryRun,
    expired: { count: expired.length, memory_ids: expired.map((m) => m.id) },
    duplicates: { count: superseded.length, superseded },
    scanned,
    budget_exhausted: pace.spent && !(expiryDone && scanDone),
  };
}

/** The oldest kept member of the space `memory` duplicates, if any. */
function oldestMatch(
  kept: Compared[],
  memory: DuplicateCandidate,
  nearThreshold: number,
): Superseded | undefined {
  let shingles: Set<string> | undefined;
  for (const older of kept) {
    if (older.memory.contentHash === memory.contentHash)
      return { memory_id: memory.id, kept_memory_id: older.memory.id, similarity: 1 };
    shingles ??= wordShingles(memory.text);
    const similarity = shingleSimilarity(older.shingles, shingles);
    if (similarity >= nearThreshold)
      return {
        memory_id: memory.id,
        kept_memory_id: older.memory.id,
        similarity: Math.round(similarity * 1000) / 1000,
      };
  }
  return undefined;
}

/** Archives a page of expired memories with their events, in one transaction; returns those archived. */
async function archivePage(
  db: Database,
  events: EventOutbox,
  page: ExpiredMemory[],
): Promise<ExpiredMemory[]> {
  if (page.length === 0) return [];
  return db.transaction(async (tx) => {
    const changed = new Set(
      await archiveExpired(
        tx,
        page.map((m) => m.id),
      ),
    );
    const archived = page.filter((m) => changed.has(m.id));
    await events.emit(
      tx,
      archived.map((memory): DomainEvent => ({
        kind: 'archived',
        workspaceId: memory.workspaceId,
        memoryId: memory.id,
        rule: 'expiry',
        details: { expires_at: memory.expiresAt?.toISOString() ?? null },
      })),
    );
    return archived;
  });
}

/** Supersedes a page's duplicates with their events, in one transaction; returns those changed. */
async function supersedePage(
  db: Database,
  events: EventOutbox,
  page: DuplicateCandidate[],
  found: Superseded[],
): Promise<Superseded[]> {
  if (found.length === 0) return [];
  const workspaceOf = new Map(page.map((m) => [m.id, m.workspaceId]));
  const byKept = new Map<string, string[]>();
  for (const d of found)
    byKept.set(d.kept_memory_id, [...(byKept.get(d.kept_memory_id) ?? []), d.memory_id]);
  return db.transaction(async (tx) => {
    const changed = new Set<string>();
    for (const [keptId, ids] of byKept)
      for (const id of await supersedeBy(tx, keptId, ids)) changed.add(id);
    const superseded = found.filter((d) => changed.has(d.memory_id));
    await events.emit(
      tx,
      superseded.map((duplicate): DomainEvent => ({
        kind: 'replaced',
        workspaceId: workspaceOf.get(duplicate.memory_id) ?? '',
        memoryId: duplicate.memory_id,
        rule: 'hygiene_duplicate',
        relatedMemoryId: duplicate.kept_memory_id,
        details: { similarity: duplicate.similarity },
      })),
    );
    return superseded;
  });
}

import { createHash } from 'node:crypto';
import {
  INGEST_LIMITS,
  OWNER_ID_ALIASES,
  OWNER_TYPE_ALIASES,
  type MemoryInsertPayload,
  type MemoryInsertResponse,
} from '@mnemo/contract';
import { ServiceError } from '../../errors.js';
import { deadlineExpired } from '../deadline-fence.js';
import {
  writeMemory,
  type MemoryWriteDeps,
  type WriteRequest,
  type WriteResult,
} from '../memory-write/index.js';
import { writeBatch, type BatchItem } from './batch.js';

/** An ingest request: a write request without its payload (each item brings its own). */
export type IngestRequest = Omit<WriteRequest, 'payload'>;

export interface IngestResult<T> {
  response: T;
  /** True when a write stored this request's audit record (as `WriteResult.audited`). */
  audited: boolean;
}

export type ItemStatus = 'stored' | 'deduped' | 'replayed' | 'failed' | 'skipped';

export interface ItemOutcome {
  status: ItemStatus;
  memory_id?: string;
  write?: MemoryInsertResponse;
  error?: { code: string; message: string };
}

export interface Counts {
  complete: boolean;
  stored: number;
  deduped: number;
  replayed: number;
  failed: number;
  skipped: number;
}

type SharedFields = Pick<
  MemoryInsertPayload,
  | 'userId'
  | 'user_id'
  | 'owner_id'
  | 'entity_id'
  | 'owner_type'
  | 'entity_type'
  | 'scope'
  | 'namespace'
  | 'containerTag'
  | 'memory_type'
  | 'importance'
  | 'extract'
>;

/** The owner, labels and write options every item of one ingest request shares. */
export function sharedWriteFields(payload: SharedFields): SharedFields {
  const shared: Record<string, unknown> = {};
  const names = [
    ...OWNER_ID_ALIASES,
    ...OWNER_TYPE_ALIASES,
    'scope',
    'namespace',
    'containerTag',
    'memory_type',
    'importance',
    'extract',
  ] as const;
  for (const name of names) if (payload[name] !== undefined) shared[name] = payload[name];
  return shared as SharedFields;
}

// Object keys sorted at every level: a re-sent request that orders its metadata differently
// derives the same keys.
const sortedKeys = (_key: string, value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;

/**
 * An item's idempotency key: the caller's key, the item's place, and a hash of the item's write.
 * A re-sent request replays every item it shares with the first one (even when messages or
 * sections were added); an item whose write changed gets a new key and is written anew.
 */
export function derivedKey(key: string, label: string, write: MemoryInsertPayload): string {
  const hash = createHash('sha256').update(JSON.stringify(write, sortedKeys)).digest('hex');
  return `${key}:${label}:${hash.slice(0, 16)}`;
}

export function tooManyItems(count: number, what: 'turns' | 'pieces'): ServiceError {
  const field = what === 'turns' ? 'messages' : 'text';
  return new ServiceError(
    'BAD_REQUEST',
    `This request would store ${count} ${what}; at most ${INGEST_LIMITS.items.max} per request`,
    { [field]: [`makes ${count} ${what}; send at most ${INGEST_LIMITS.items.max} per request`] },
  );
}

/** The fewest items a batch looks up after one that ended early. */
const MIN_BATCH_WINDOW = 16;

/**
 * The most text one batch writes (but always at least one item). A batch commits as one
 * transaction, which the request's deadline lets finish; bounding it keeps a long document's
 * commits short, so the deadline stops the ingest between batches, as it does between items.
 */
const MAX_BATCH_CHARS = 32_000;

/** How many of `pending`, from `start`, fit one batch: at most `window`, and within MAX_BATCH_CHARS. */
function batchEnd(pending: readonly BatchItem[], start: number, window: number): number {
  let end = start;
  let chars = 0;
  while (end < pending.length && end - start < window) {
    chars += pending[end]!.payload.text.length;
    if (end > start && chars > MAX_BATCH_CHARS) break;
    end += 1;
  }
  return end;
}

/**
 * Writes items in order, with the answers writing them one after another through the write
 * pipeline would give; each item is atomic on its own. Runs of items go through
 * {@link writeBatch} (one embedder call, one lookup, one transaction per run); an item the batch
 * leaves (one it cannot decide from its lookup, or one refused) is written alone, and batching resumes
 * after it. When a write is refused (a {@link ServiceError}: a cap, a conflicting key) and an
 * earlier item was written, the answer reports it `failed` and the later items `skipped`:
 * re-sending the request with the same idempotency key replays the done items and writes the
 * rest. When the first item is refused nothing was written and its error is the answer. Other
 * errors (faults) propagate.
 */
export async function writeItems<D extends object>(
  deps: MemoryWriteDeps,
  request: IngestRequest,
  items: Array<{ payload: MemoryInsertPayload; details: D }>,
): Promise<{ counts: Counts; results: Array<D & ItemOutcome>; audited: boolean }> {
  const results: Array<D & ItemOutcome> = [];
  const counts: Counts = {
    complete: true,
    stored: 0,
    deduped: 0,
    replayed: 0,
    failed: 0,
    skipped: 0,
  };
  let audited = false;
  const record = (details: D, result: WriteResult) => {
    audited ||= result.audited;
    const status: ItemStatus = !result.audited
      ? 'replayed'
      : result.response.deduped
        ? 'deduped'
        : 'stored';
    counts[status] += 1;
    results.push({
      ...details,
      status,
      memory_id: result.response.memory_id,
      write: result.response,
    });
  };
  const pending: BatchItem[] = items.map((item) => ({ payload: item.payload }));
  let batching = true;
  // Items a batch looks up at once. After a batch that ended at an item to be written alone the
  // items after it are looked up again, so the next batch looks only twice as far as that one got.
  let window = items.length;
  // The batch left the next item to be written alone.
  let alone = false;
  let index = 0;
  while (index < items.length) {
    // Between writes other requests (and the request's deadline) get their turn: on the embedded
    // database a write never waits on I/O, so the loop would otherwise hold the event loop.
    if (index > 0) await new Promise((resolve) => setImmediate(resolve));
    // Past the request's deadline the rest is left for a retry (its answer says what was stored).
    if (!counts.complete || (index > 0 && deadlineExpired())) {
      counts.complete = false;
      for (const item of items.slice(index)) results.push({ ...item.details, status: 'skipped' });
      counts.skipped += items.length - index;
      break;
    }
    if (batching && !alone) {
      const batch = await writeBatch(
        deps,
        request,
        pending.slice(index, batchEnd(pending, index, window)),
      );
      batching = batch.keepBatching;
      alone = batch.aloneNext === true;
      window = alone ? Math.max(MIN_BATCH_WINDOW, 2 * batch.results.length) : 2 * window;
      for (const result of batch.results) record(items[index++]!.details, result);
      if (batch.results.length > 0) continue;
    }
    alone = false;
    const item = items[index]!;
    try {
      record(item.details, await writeMemory(deps, { ...request, payload: item.payload }));
    } catch (error) {
      if (!(error instanceof ServiceError) || index === 0) throw error;
      counts.complete = false;
      counts.failed += 1;
      results.push({
        ...item.details,
        status: 'failed',
        error: { code: error.code, message: error.message },
      });
    }
    index += 1;
  }
  return { counts, results, audited };
}

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import {
  APIConnectionError,
  MnemoError,
  type AddMemoryParams,
  type MemoryClient,
} from '@mnemo/client';
import type { App } from '../context.js';
import type { Writer } from '../output.js';
import { positiveInt } from '../parse.js';
import type { Bind } from './memories.js';
import { ownerOptions, type OwnerFlags } from './shared.js';
import { firstLineOf, formatImport, importExportFile, isExportHeader } from './owner-data.js';

/** One record of the file, with where it came from (line for JSONL, index for a JSON array). */
export interface ImportRecord {
  at: string;
  record?: Record<string, unknown>;
  error?: string;
}

export interface ImportFailure {
  at: string;
  reason: string;
}

export interface ImportSummary {
  file: string;
  total: number;
  imported: number;
  deduped: number;
  failed: number;
  failures: ImportFailure[];
  duration_ms: number;
}

/** A JSON array of memories, or JSON Lines (one memory per line; blank lines skipped). */
export function parseImportFile(text: string): ImportRecord[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let array: unknown;
    try {
      array = JSON.parse(trimmed);
    } catch (error) {
      throw new Error(`not a valid JSON array: ${(error as Error).message}`);
    }
    if (!Array.isArray(array)) throw new Error('expected a JSON array of memories');
    return array.map((item, index) => toRecord(`record ${index + 1}`, item));
  }
  const records: ImportRecord[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    let item: unknown;
    try {
      item = JSON.parse(line);
    } catch {
      records.push({ at: `line ${index + 1}`, error: 'invalid JSON' });
      return;
    }
    records.push(toRecord(`line ${index + 1}`, item));
  });
  return records;
}

function toRecord(at: string, item: unknown): ImportRecord {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return { at, error: 'not a JSON object' };
  }
  const record = item as Record<string, unknown>;
  if (typeof record.text !== 'string' || record.text === '') return { at, error: 'missing "text"' };
  return { at, record };
}

/** JSON with sorted keys, so that the same record always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The record's own `idempotency_key`, else one derived from a stable hash of the record (with the
 * defaults it is imported under applied): re-running the same file sends the same keys, so the
 * server replays instead of storing again.
 */
export function importKey(record: Record<string, unknown>): string {
  if (typeof record.idempotency_key === 'string') return record.idempotency_key;
  const hash = createHash('sha256').update(canonical(record)).digest('hex');
  return `import-${hash.slice(0, 48)}`;
}

const OWNER_ID_KEYS = ['ownerId', 'userId', 'entityId', 'owner_id', 'user_id', 'entity_id'];
const OWNER_TYPE_KEYS = ['ownerType', 'entityType', 'owner_type', 'entity_type'];

/** The record with the command-line defaults for what it does not say itself. */
export function effectiveRecord(
  record: Record<string, unknown>,
  defaults: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...defaults, ...record };
  if (
    OWNER_ID_KEYS.some((key) => key !== 'ownerId' && record[key] !== undefined) &&
    record.ownerId === undefined
  ) {
    delete merged.ownerId;
  }
  if (
    OWNER_TYPE_KEYS.some((key) => key !== 'ownerType' && record[key] !== undefined) &&
    record.ownerType === undefined
  ) {
    delete merged.ownerType;
  }
  return merged;
}

function progressBar(stream: Writer) {
  let last = 0;
  let shown = { done: 0, total: 0, summary: { imported: 0, deduped: 0, failed: 0 } };
  let waitingUntil = 0;
  let drawnLength = 0;
  let ticker: ReturnType<typeof setInterval> | undefined;
  const draw = () => {
    const { done, total, summary } = shown;
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const waitSeconds = Math.ceil((waitingUntil - Date.now()) / 1000);
    const waiting =
      waitSeconds > 0 ? `  rate limited (429): waiting ${waitSeconds} s as the server asks` : '';
    const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}  imported ${summary.imported}  deduped ${summary.deduped}  failed ${summary.failed}${waiting}`;
    // Spaces wipe what a longer previous line (a wait notice) left behind.
    stream.write(`\r${line}${' '.repeat(Math.max(0, drawnLength - line.length))}`);
    drawnLength = line.length;
  };
  return {
    update(
      done: number,
      total: number,
      summary: Pick<ImportSummary, 'imported' | 'deduped' | 'failed'>,
      force = false,
    ) {
      shown = { done, total, summary: { ...summary } };
      const now = Date.now();
      if (!force && now - last < 100) return;
      last = now;
      draw();
    },
    /** A rate limit holds the import for `waitMs` (0: it goes on); the countdown ticks each second. */
    wait(waitMs: number) {
      waitingUntil = waitMs > 0 ? Math.max(waitingUntil, Date.now() + waitMs) : waitingUntil;
      draw();
      ticker ??= setInterval(() => {
        draw();
        if (Date.now() >= waitingUntil) {
          clearInterval(ticker);
          ticker = undefined;
        }
      }, 1000);
    },
    end() {
      if (ticker) clearInterval(ticker);
      stream.write('\n');
    },
  };
}

/**
 * Without a progress bar: one stderr line when a rate-limit wait begins (several workers hitting
 * the same limit at once make one wait, not one line each).
 */
function waitNotice(stream: Writer): (waitMs: number) => void {
  let waitingUntil = 0;
  return (waitMs) => {
    const now = Date.now();
    if (waitMs <= 0 || now < waitingUntil) {
      waitingUntil = Math.max(waitingUntil, now + waitMs);
      return;
    }
    waitingUntil = now + waitMs;
    stream.write(
      `rate limited (429): waiting ${Math.ceil(waitMs / 1000)} s as the server asks (Retry-After), then going on\n`,
    );
  };
}

export interface ImportOptions {
  concurrency: number;
  defaults: Record<string, unknown>;
  onProgress?: (done: number, summary: ImportSummary) => void;
  /** Told when a rate limit makes the import wait (ms), and again with 0 when it goes on. */
  onWait?: (waitMs: number) => void;
  /** How waiting is done (tests pass a fake clock). */
  sleep?: (ms: number) => Promise<void>;
}

/** Rate-limit waits one record may sit out before it counts as failed. */
const MAX_RATE_LIMIT_WAITS = 20;
/** Quick retries of a 5xx or a network failure, as the client would do them (2 by default). */
const TRANSIENT_RETRIES = 2;
const TRANSIENT_BASE_MS = 500;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One write that sits out the server's rate limits: a 429 `RATE_LIMITED` waits the
 * `Retry-After` the server sent, told to `onWait` so that the user sees why nothing moves, and
 * tries again, so a large import under a plan's limits still completes. The client's own
 * retries are off for these writes (they would wait the same time silently); 5xx and network
 * failures get the client's usual short retries here instead. Other errors, including
 * `CAP_EXCEEDED` (a daily cap: waiting would take hours), are the record's failure. The
 * idempotency key makes every retry safe even if a refused attempt had reached the database.
 */
async function addWaitingOutRateLimits<T>(
  add: () => Promise<T>,
  onWait: ((waitMs: number) => void) | undefined,
  sleep: (ms: number) => Promise<void>,
): Promise<T> {
  let waits = 0;
  let transient = 0;
  for (;;) {
    try {
      return await add();
    } catch (error) {
      if (!(error instanceof MnemoError)) throw error;
      const waitMs = error.retryAfterMs;
      if (error.code === 'RATE_LIMITED' && waitMs !== undefined) {
        if (waits++ >= MAX_RATE_LIMIT_WAITS) throw error;
        onWait?.(waitMs);
        await sleep(waitMs);
        onWait?.(0);
        continue;
      }
      const isTransient =
        error instanceof APIConnectionError ||
        (error.status !== undefined && error.status >= 500) ||
        error.code === 'RATE_LIMITED';
      if (!isTransient || transient >= TRANSIENT_RETRIES) throw error;
      await sleep(TRANSIENT_BASE_MS * 2 ** transient++);
    }
  }
}

/** Writes every record with at most `concurrency` requests in flight; never throws per record. */
export async function importRecords(
  client: MemoryClient,
  file: string,
  records: ImportRecord[],
  { concurrency, defaults, onProgress, onWait, sleep = realSleep }: ImportOptions,
): Promise<ImportSummary> {
  const started = Date.now();
  const summary: ImportSummary = {
    file,
    total: records.length,
    imported: 0,
    deduped: 0,
    failed: 0,
    failures: [],
    duration_ms: 0,
  };
  let next = 0;
  let done = 0;
  const fail = (at: string, reason: string) => {
    summary.failed++;
    summary.failures.push({ at, reason });
  };
  const worker = async () => {
    while (next < records.length) {
      const item = records[next++]!;
      if (item.error !== undefined || !item.record) {
        fail(item.at, item.error ?? 'invalid record');
      } else {
        const payload = effectiveRecord(item.record, defaults);
        try {
          const result = await addWaitingOutRateLimits(
            () =>
              client.memories.add(
                {
                  ...(payload as unknown as AddMemoryParams),
                  idempotency_key: importKey(payload),
                },
                { maxRetries: 0 },
              ),
            onWait,
            sleep,
          );
          if (result.deduped) summary.deduped++;
          else summary.imported++;
        } catch (error) {
          if (error instanceof MnemoError) {
            const details = Object.entries(error.details ?? {})
              .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
              .join(', ');
            fail(item.at, `${error.code}: ${error.message}${details ? ` (${details})` : ''}`);
          } else {
            fail(item.at, error instanceof Error ? error.message : String(error));
          }
        }
      }
      done++;
      onProgress?.(done, summary);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(concurrency, Math.max(records.length, 1)) }, worker),
  );
  summary.failures.sort((a, b) => a.at.localeCompare(b.at, 'en', { numeric: true }));
  summary.duration_ms = Date.now() - started;
  return summary;
}

const SHOWN_FAILURES = 20;

function formatSummary(summary: ImportSummary): string {
  const lines = [
    `imported ${summary.imported}, deduped ${summary.deduped}, failed ${summary.failed} (of ${summary.total} in ${summary.file}, ${(summary.duration_ms / 1000).toFixed(1)} s)`,
  ];
  for (const failure of summary.failures.slice(0, SHOWN_FAILURES)) {
    lines.push(`  ${failure.at}: ${failure.reason}`);
  }
  if (summary.failures.length > SHOWN_FAILURES) {
    lines.push(`  … and ${summary.failures.length - SHOWN_FAILURES} more (--json lists them all)`);
  }
  return lines.join('\n');
}

interface ImportFlags extends OwnerFlags {
  concurrency: number;
  namespace?: string;
  progress: boolean;
}

/** Thrown to make the exit code 1 after the summary was printed. */
export class ImportFailedError extends Error {
  override readonly name = 'ImportFailedError';
}

/** `mnemo import <file>`: JSONL or a JSON array of memories, resumable. */
export function importCommand(bind: Bind): Command {
  return ownerOptions(new Command('import'))
    .description(
      'Import memories from a JSONL file or a JSON array (resumable: re-running writes nothing twice)',
    )
    .argument(
      '<file>',
      'JSON Lines, or a JSON array, of memory insert payloads ({"text": ..., ...}); or a file `mnemo export` wrote (ids and history kept)',
    )
    .option('--namespace <label>', 'namespace for records that have none')
    .option('--concurrency <n>', 'requests in flight', positiveInt, 4)
    .option('--no-progress', 'no progress bar, even on a terminal')
    .action(
      bind(async (app: App, file: string, flags: ImportFlags) => {
        const { client, output, context } = app;
        // An export file (its header line first) goes to the import route: ids and history kept.
        const first = await firstLineOf(file).catch((error: NodeJS.ErrnoException) => {
          throw new Error(`cannot read ${file}: ${error.code ?? error.message}`);
        });
        if (isExportHeader(first)) {
          output.result(await importExportFile(app, file), (result) => formatImport(file, result));
          return;
        }
        let text: string;
        try {
          text = await readFile(file, 'utf8');
        } catch (error) {
          throw new Error(
            `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          );
        }
        let records: ImportRecord[];
        try {
          records = parseImportFile(text);
        } catch (error) {
          throw new Error(`${file}: ${(error as Error).message}`);
        }
        // Defaults apply to records that do not say otherwise.
        const defaults: Record<string, unknown> = {};
        if (flags.ownerId ?? flags.userId) defaults.ownerId = flags.ownerId ?? flags.userId;
        if (flags.ownerType) defaults.ownerType = flags.ownerType;
        if (flags.namespace) defaults.namespace = flags.namespace;

        const bar =
          context.isTTY && flags.progress && !output.json ? progressBar(context.stderr) : undefined;
        const summary = await importRecords(client, file, records, {
          concurrency: flags.concurrency,
          defaults,
          onProgress: bar
            ? (done, current) => bar.update(done, records.length, current)
            : undefined,
          onWait: bar
            ? (waitMs) => bar.wait(waitMs)
            : output.json
              ? undefined
              : waitNotice(context.stderr),
        });
        if (bar) {
          bar.update(records.length, records.length, summary, true);
          bar.end();
        }
        output.result(summary, formatSummary);
        if (summary.failed > 0) throw new ImportFailedError(`${summary.failed} record(s) failed`);
      }),
    );
}

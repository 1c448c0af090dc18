import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Command, Option } from 'commander';
import {
  DEFAULT_PART_CHARS,
  MnemoError,
  type ConversationIngestResponse,
  type DocumentIngestResponse,
  type IngestConversationParams,
  type IngestProgress,
  type MemoryClient,
} from '@mnemo/client';
import type { App } from '../context.js';
import type { Writer } from '../output.js';
import { choice, memoryType, metadata, positiveInt } from '../parse.js';
import { ImportFailedError } from './import.js';
import type { Bind } from './memories.js';
import { defined, ownerFrom, ownerOptions, type OwnerFlags } from './shared.js';

/** Reads a file, or standard input for `-`. */
async function readInput(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/**
 * A conversation file: a JSON object (the request body: `messages` or `transcript`, and any other
 * field), a JSON array of messages, or plain text read as a transcript (`Speaker: text` lines).
 */
export function parseConversationFile(text: string): Record<string, unknown> {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return { transcript: text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch (error) {
    throw new Error(`not valid JSON: ${(error as Error).message}`);
  }
  if (Array.isArray(parsed)) return { messages: parsed };
  if (parsed !== null && typeof parsed === 'object') return parsed as Record<string, unknown>;
  throw new Error('expected a JSON object or an array of messages');
}

/** A key from the content: running the command again on the same file replays, never doubles. */
export function contentKey(prefix: string, ...parts: unknown[]): string {
  const hash = createHash('sha256').update(JSON.stringify(parts)).digest('hex');
  return `${prefix}-${hash.slice(0, 40)}`;
}

/** Rate-limit waits before the command gives up. */
const MAX_RATE_LIMIT_WAITS = 20;
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `send` again after a 429 `RATE_LIMITED` the client could not retry away, after the
 * server's Retry-After. Safe: the same idempotency key replays what an earlier attempt stored.
 */
export async function waitingOutRateLimits<T>(
  send: () => Promise<T>,
  onWait: (waitMs: number) => void = () => undefined,
  sleep: (ms: number) => Promise<void> = realSleep,
): Promise<T> {
  for (let waits = 0; ; waits++) {
    try {
      return await send();
    } catch (error) {
      const waitMs = error instanceof MnemoError ? error.retryAfterMs : undefined;
      const limited = error instanceof MnemoError && error.code === 'RATE_LIMITED';
      if (!limited || waitMs === undefined || waits >= MAX_RATE_LIMIT_WAITS) throw error;
      onWait(waitMs);
      await sleep(waitMs);
    }
  }
}

type Counts = Pick<
  DocumentIngestResponse,
  'complete' | 'stored' | 'deduped' | 'replayed' | 'failed' | 'skipped'
>;

function formatCounts(counts: Counts): string {
  const head = `stored ${counts.stored}, deduped ${counts.deduped}, replayed ${counts.replayed}, failed ${counts.failed}, skipped ${counts.skipped}`;
  return counts.complete ? head : `${head} (incomplete: run the same command again to finish)`;
}

function failures(
  items: ReadonlyArray<{ status: string; error?: { code: string; message: string } | undefined }>,
  label: (index: number) => string,
): string[] {
  return items.flatMap((item, index) =>
    item.status === 'failed' && item.error
      ? [`  ${label(index)}: ${item.error.code}: ${item.error.message}`]
      : [],
  );
}

function formatConversation(result: ConversationIngestResponse): string {
  return [
    `${formatCounts(result)} (${result.turns.length} turns of ${result.messages} messages)`,
    ...result.turns.map(
      (turn) =>
        `  turn ${turn.turn} (messages ${turn.message_start}-${turn.message_end}): ${turn.status}${turn.memory_id ? ` ${turn.memory_id}` : ''}`,
    ),
    ...failures(result.turns, (i) => `turn ${i}`),
  ].join('\n');
}

function formatDocument(result: DocumentIngestResponse): string {
  return [
    `${formatCounts(result)} (${result.items.length} pieces in ${result.sections} sections, document ${result.document_id})`,
    ...failures(result.items, (i) => {
      const item = result.items[i]!;
      return `section ${item.section_index} piece ${item.piece}/${item.pieces}`;
    }),
  ].join('\n');
}

/** One line on stderr redrawn after each request: parts, sections and pieces so far. */
function progressLine(stream: Writer) {
  let drawn = 0;
  const draw = (line: string) => {
    stream.write(`\r${line}${' '.repeat(Math.max(0, drawn - line.length))}`);
    drawn = line.length;
  };
  return {
    update({ part, parts, sections, items }: IngestProgress) {
      const width = 30;
      const filled = Math.round((part / parts) * width);
      draw(
        `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] part ${part}/${parts}  sections ${sections}  pieces ${items}`,
      );
    },
    wait(waitMs: number) {
      draw(`rate limited: waiting ${Math.ceil(waitMs / 1000)} s`);
    },
    end() {
      if (drawn > 0) stream.write('\n');
    },
  };
}

interface WriteFlags extends OwnerFlags {
  namespace?: string;
  memoryType?: string;
  metadata?: Record<string, string | number | boolean | null>;
  idempotencyKey?: string;
}

function writeFields(flags: WriteFlags) {
  return defined({
    ...ownerFrom(flags),
    namespace: flags.namespace,
    memory_type: flags.memoryType as IngestConversationParams['memory_type'],
    metadata: flags.metadata,
  });
}

function writeOptions(command: Command): Command {
  return ownerOptions(command)
    .option('--namespace <label>', 'namespace of the stored memories')
    .option('--memory-type <type>', 'memory type of the stored memories', memoryType)
    .option('--metadata <json>', 'metadata object added to every stored memory', metadata)
    .option(
      '--idempotency-key <key>',
      'key the server derives per-item keys from (default: a hash of the input)',
    );
}

interface ConversationFlags extends WriteFlags {
  groupBy?: 'exchange' | 'message';
  conversationId?: string;
  extract: boolean;
}

/** Sends a conversation; exported for tests. */
export async function ingestConversationFile(
  client: MemoryClient,
  text: string,
  flags: ConversationFlags,
  onWait?: (waitMs: number) => void,
  sleep?: (ms: number) => Promise<void>,
): Promise<ConversationIngestResponse> {
  const file = parseConversationFile(text);
  const params = {
    ...file,
    ...writeFields(flags),
    ...defined({ group_by: flags.groupBy, conversation_id: flags.conversationId }),
    ...(flags.extract ? {} : { extract: false }),
  } as IngestConversationParams;
  const key = flags.idempotencyKey ?? (file.idempotency_key as string | undefined);
  const idempotency_key = key ?? contentKey('conv', params);
  return waitingOutRateLimits(
    () => client.ingest.conversation({ ...params, idempotency_key }),
    onWait,
    sleep,
  );
}

interface DocumentFlags extends WriteFlags {
  title?: string;
  source?: string;
  extract: boolean;
  partChars: number;
  maxPieceChars?: number;
  progress: boolean;
}

/** Sends a document in parts; exported for tests. */
export async function ingestDocumentFile(
  client: MemoryClient,
  file: string,
  text: string,
  flags: DocumentFlags,
  hooks: {
    onProgress?: (progress: IngestProgress) => void;
    onWait?: (waitMs: number) => void;
    sleep?: (ms: number) => Promise<void>;
  } = {},
): Promise<DocumentIngestResponse> {
  const params = {
    text,
    ...writeFields(flags),
    ...defined({
      title: flags.title,
      source: flags.source ?? (file === '-' ? undefined : basename(file)),
      max_piece_chars: flags.maxPieceChars,
    }),
    ...(flags.extract ? { extract: true } : {}),
  };
  const idempotency_key = flags.idempotencyKey ?? contentKey('doc', params);
  return waitingOutRateLimits(
    () =>
      client.ingest.document(
        { ...params, idempotency_key },
        { partChars: flags.partChars, onProgress: hooks.onProgress },
      ),
    hooks.onWait,
    hooks.sleep,
  );
}

/** `mnemo ingest conversation <file|->` and `mnemo ingest document <file|->`. */
export function ingestCommand(bind: Bind): Command {
  const conversation = writeOptions(new Command('conversation'))
    .description(
      'Store a conversation as memories, turn by turn (re-running on the same file stores nothing twice)',
    )
    .argument(
      '<file>',
      'JSON ({"messages": [...]} or an array of messages) or a text transcript; - reads stdin',
    )
    .addOption(
      new Option('--group-by <how>', 'one memory per exchange (default) or per message').argParser(
        choice(['exchange', 'message'] as const),
      ),
    )
    .option('--conversation-id <id>', 'kept in every turn’s metadata')
    .option('--no-extract', 'store the turns only, without extracted child memories')
    .action(
      bind(async ({ client, output }: App, file: string, flags: ConversationFlags) => {
        const text = await readInput(file);
        let result: ConversationIngestResponse;
        try {
          result = await ingestConversationFile(client, text, flags);
        } catch (error) {
          if (error instanceof MnemoError) throw error;
          throw new Error(`${file}: ${(error as Error).message}`);
        }
        output.result(result, formatConversation);
        if (!result.complete) throw new ImportFailedError(`${result.failed} turn(s) failed`);
      }),
    );

  const document = writeOptions(new Command('document'))
    .description(
      'Store a document as memories: cut at headings and paragraphs, its source kept on each (resumable)',
    )
    .argument('<file>', 'a text or Markdown file; - reads stdin')
    .option('--title <title>', 'document title kept in the metadata')
    .option('--source <source>', 'URL or file name kept in the metadata (default: the file name)')
    .option(
      '--part-chars <n>',
      'characters per request; a longer document goes in several',
      positiveInt,
      DEFAULT_PART_CHARS,
    )
    .option('--max-piece-chars <n>', 'longest stored piece (server default 6000)', positiveInt)
    .option('--extract', 'also extract child memories from each piece (off by default)', false)
    .option('--no-progress', 'no progress line, even on a terminal')
    .action(
      bind(async ({ client, output, context }: App, file: string, flags: DocumentFlags) => {
        const text = await readInput(file);
        const line =
          context.isTTY && flags.progress && !output.json
            ? progressLine(context.stderr)
            : undefined;
        const result = await ingestDocumentFile(client, file, text, flags, {
          onProgress: line ? (progress) => line.update(progress) : undefined,
          onWait: line ? (waitMs) => line.wait(waitMs) : undefined,
        });
        line?.end();
        output.result(result, formatDocument);
        if (!result.complete) throw new ImportFailedError(`${result.failed} piece(s) failed`);
      }),
    );

  return new Command('ingest')
    .description('Store a conversation or a document as memories (operator routes)')
    .addCommand(conversation)
    .addCommand(document);
}

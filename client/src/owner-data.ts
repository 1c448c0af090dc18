import {
  contract,
  JSONL_CONTENT_TYPE,
  type ErasureReceipt,
  type ExportEnd,
  type ExportHeader,
  type ExportLine,
  type ImportResponse,
} from '@mnemo/contract';
import { MnemoError } from './core/errors.js';
import type { OwnerParams } from './core/types.js';
import { withWireOwner } from './internal/owner.js';
import type { RequestOptions, RestTransport } from './transport/rest.js';

/** `client.ownerData.export(...)`: whose memories, from where, with or without embeddings. */
export type ExportParams = OwnerParams & {
  /** Every owner of the workspace instead of one. */
  allOwners?: boolean;
  /** Resume after this memory id (an end line's `next_after`). */
  after?: string;
  /** Include chunk embeddings (default true); without them the importer embeds again. */
  embeddings?: boolean;
  /** Memories per request (default 500): each response is read whole, one at a time. */
  pageSize?: number;
};

/** Options of `client.ownerData.import(...)`. */
export interface ImportOptions extends RequestOptions {
  /** Upper bound of one request's body in bytes (default 900 000, under the server's 1 MiB). */
  maxRequestBytes?: number;
}

const DEFAULT_PAGE_SIZE = 500;
const DEFAULT_MAX_REQUEST_BYTES = 900_000;

function incomplete(message: string): MnemoError {
  return new MnemoError({ code: 'INVALID_RESPONSE', message });
}

/** Lines of a JSON Lines text, without blank ones. */
function splitLines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/** Owner export, import and erasure (operator routes): `client.ownerData.export / import / erase`. */
export class OwnerData {
  constructor(private readonly rest: RestTransport) {}

  /**
   * The owner's memories as export lines (`GET /v1/export`): the header, one line per memory
   * (chunks, history, links, pin), then one end line. Requested page by page through the cursor,
   * so a large owner is never held in memory; a page that arrives cut off (no end line) throws.
   *
   * @example
   * ```ts
   * for await (const line of client.ownerData.export({ ownerId: 'jane' })) {
   *   process.stdout.write(`${JSON.stringify(line)}\n`);
   * }
   * ```
   */
  async *export(params: ExportParams = {}, options?: RequestOptions): AsyncGenerator<ExportLine> {
    const { allOwners, after, embeddings, pageSize = DEFAULT_PAGE_SIZE, ...owner } = params;
    const ownerQuery = allOwners ? { all_owners: 'true' } : withWireOwner(owner);
    let cursor = after;
    let total = 0;
    let first = true;
    for (;;) {
      const { data } = await this.rest.request<string>(contract.ownerData.exportOwner, {
        ...options,
        query: {
          ...ownerQuery,
          after: cursor,
          limit: pageSize,
          embeddings: embeddings === undefined ? undefined : String(embeddings),
        },
        headers: { accept: JSONL_CONTENT_TYPE },
        responseText: true,
      });
      const lines = splitLines(data).map((line) => JSON.parse(line) as ExportLine);
      const end = lines.at(-1);
      if (lines[0]?.type !== 'header' || end?.type !== 'end') {
        throw incomplete('The export response was cut off (no end line); resume from the cursor');
      }
      if (first) yield lines[0] as ExportHeader;
      first = false;
      for (const line of lines.slice(1, -1)) yield line;
      total += end.memories;
      cursor = end.next_after ?? cursor;
      if (end.complete) {
        yield { type: 'end', memories: total, complete: true, next_after: cursor ?? null };
        return;
      }
    }
  }

  /**
   * Imports export lines (`POST /v1/import`), as text lines or parsed ones, from an array, an
   * iterable or an async iterable (a file read line by line). The header comes first; the rest
   * goes in requests under `maxRequestBytes`, each starting with the header, and errors name
   * the line of the whole file. Idempotent: lines already imported are skipped. A request the
   * server stopped at its deadline is sent again from where it stopped.
   *
   * @example
   * ```ts
   * const lines = readline.createInterface({ input: fs.createReadStream('jane.jsonl') });
   * const result = await client.ownerData.import(lines);
   * ```
   */
  async import(
    lines: Iterable<string | ExportLine> | AsyncIterable<string | ExportLine>,
    { maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES, ...options }: ImportOptions = {},
  ): Promise<ImportResponse> {
    const total: ImportResponse = {
      imported: { memories: 0, chunks: 0, events: 0, links: 0, pins: 0 },
      skipped: 0,
      remapped: 0,
      reembedded: 0,
      lines: 0,
      batches: 0,
      complete: true,
    };
    let header: string | undefined;
    let pending: Array<{ line: number; text: string }> = [];
    let pendingBytes = 0;
    const send = async () => {
      while (pending.length > 0) {
        const firstLine = pending[0]!.line;
        const { data } = await this.rest.request<ImportResponse>(contract.ownerData.importOwner, {
          ...options,
          // Body line 2 is file line `firstLine`.
          query: { line_offset: firstLine - 2 },
          rawBody: {
            contentType: JSONL_CONTENT_TYPE,
            text: [header!, ...pending.map((item) => item.text)].join('\n'),
          },
        });
        for (const key of Object.keys(total.imported) as Array<keyof ImportResponse['imported']>) {
          total.imported[key] += data.imported[key];
        }
        total.skipped += data.skipped;
        total.remapped += data.remapped;
        total.reembedded += data.reembedded;
        total.lines += data.lines;
        total.batches += data.batches;
        if (data.complete) {
          pending = [];
        } else {
          const resume = data.resume_line ?? firstLine;
          // The lines before `resume` are in; send the rest again (a retry skips what is in).
          total.lines -= pending.filter((item) => item.line >= resume).length;
          pending = pending.filter((item) => item.line >= resume);
        }
      }
      pendingBytes = 0;
    };
    let number = 0;
    for await (const item of lines as AsyncIterable<string | ExportLine>) {
      number += 1;
      const text = typeof item === 'string' ? item.trim() : JSON.stringify(item);
      if (text === '') continue;
      if (header === undefined) {
        header = text;
        continue;
      }
      const bytes = new TextEncoder().encode(text).length + 1;
      if (pending.length > 0 && pendingBytes + bytes + header.length > maxRequestBytes) {
        await send();
      }
      pending.push({ line: number, text });
      pendingBytes += bytes;
    }
    if (header === undefined)
      throw incomplete('Nothing to import: the first line must be the export header');
    await send();
    return total;
  }

  /**
   * Erases an owner (`POST /v1/erase`): its memories, chunks, links, pins, learning signals,
   * saved searches, history events and the audit paths naming its memories. Returns the receipt
   * (counts per table); erasing again returns the same receipt with `replayed: true`.
   *
   * @example
   * ```ts
   * const receipt = await client.ownerData.erase({ ownerId: 'jane' });
   * ```
   */
  async erase(params: OwnerParams, options?: RequestOptions): Promise<ErasureReceipt> {
    const owner = withWireOwner(params);
    const { data } = await this.rest.request<ErasureReceipt>(contract.ownerData.eraseOwner, {
      ...options,
      body: { owner_id: owner.owner_id, owner_type: owner.owner_type },
    });
    return data;
  }
}

export type { ExportEnd, ExportHeader, ExportLine, ImportResponse, ErasureReceipt };

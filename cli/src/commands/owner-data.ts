import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import type { ErasureReceipt, ImportResponse, OwnerParams } from '@mnemo/client';
import type { App } from '../context.js';
import type { Bind } from './memories.js';
import { ownerFrom, ownerOptions, type OwnerFlags } from './shared.js';

interface OwnerDataFlags extends OwnerFlags {
  /** `--owner`: short for `--owner-id`. */
  owner?: string;
}

function ownerOf(flags: OwnerDataFlags): OwnerParams {
  const owner = ownerFrom(flags);
  return flags.owner !== undefined && owner.ownerId === undefined
    ? { ...owner, ownerId: flags.owner }
    : owner;
}

/** `mnemo export --owner jane > jane.jsonl`: the owner's memories as JSON Lines on stdout. */
export function exportCommand(bind: Bind): Command {
  return ownerOptions(new Command('export'))
    .description(
      "Export an owner's memories (or the workspace's) as JSON Lines on stdout: history, links and pins included",
    )
    .option('--owner <id>', 'short for --owner-id')
    .option('--all-owners', 'every owner of the workspace')
    .option('--after <memory-id>', "resume after this memory id (an end line's next_after)")
    .option('--no-embeddings', 'leave embeddings out (the importer embeds again)')
    .action(
      bind(
        async (
          { client, context }: App,
          flags: OwnerDataFlags & { allOwners?: boolean; after?: string; embeddings: boolean },
        ) => {
          const owner = ownerOf(flags);
          if (!flags.allOwners && owner.ownerId === undefined) {
            throw new Error('give --owner <id> (or --all-owners)');
          }
          const lines = client.ownerData.export({
            ...(flags.allOwners ? { allOwners: true } : owner),
            ...(flags.after ? { after: flags.after } : {}),
            embeddings: flags.embeddings,
          });
          for await (const line of lines) context.stdout.write(`${JSON.stringify(line)}\n`);
        },
      ),
    );
}

/** The first non-blank line of a file, to tell an export from a list of memories to write. */
export async function firstLineOf(file: string): Promise<string | undefined> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  try {
    for await (const line of lines) if (line.trim() !== '') return line;
  } finally {
    lines.close();
  }
  return undefined;
}

/** Whether a first line is an export's header (`{"type":"header","format":"mnemo-export",...}`). */
export function isExportHeader(line: string | undefined): boolean {
  if (line === undefined) return false;
  try {
    const value = JSON.parse(line) as { type?: unknown; format?: unknown };
    return value.type === 'header' && value.format === 'mnemo-export';
  } catch {
    return false;
  }
}

export function formatImport(file: string, result: ImportResponse): string {
  const { imported } = result;
  return `imported ${imported.memories} memories (${imported.chunks} chunks, ${imported.events} events, ${imported.links} links, ${imported.pins} pins), skipped ${result.skipped} already present, remapped ${result.remapped}, re-embedded ${result.reembedded} chunks, from ${file}`;
}

/** Imports an export file, read line by line (the whole file is never held). */
export async function importExportFile({ client }: App, file: string): Promise<ImportResponse> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  return client.ownerData.import(lines);
}

function formatReceipt(receipt: ErasureReceipt): string {
  const counts = Object.entries(receipt.counts)
    .filter(([, n]) => n > 0)
    .map(([table, n]) => `${table} ${n}`)
    .join(', ');
  const what = receipt.replayed ? 'already erased' : 'erased';
  return `${receipt.owner_type}:${receipt.owner_id} ${what} at ${receipt.erased_at} (receipt ${receipt.receipt_id})${counts ? `: ${counts}` : ''}`;
}

/** `mnemo erase --owner jane --yes`: everything of one owner, with a receipt. */
export function eraseCommand(bind: Bind): Command {
  return ownerOptions(new Command('erase'))
    .description(
      'Erase an owner completely (memories, chunks, links, pins, signals, history, audit paths); prints the receipt',
    )
    .option('--owner <id>', 'short for --owner-id')
    .option('--yes', 'confirm: erasure cannot be undone')
    .action(
      bind(async ({ client, output }: App, flags: OwnerDataFlags & { yes?: boolean }) => {
        const owner = ownerOf(flags);
        if (owner.ownerId === undefined) throw new Error('give --owner <id>');
        if (!flags.yes) {
          throw new Error(`erasing ${owner.ownerId} cannot be undone: add --yes to confirm`);
        }
        output.result(await client.ownerData.erase(owner), formatReceipt);
      }),
    );
}

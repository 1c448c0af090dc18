import { Command, Option } from 'commander';
import {
  LIMITS,
  type DeleteMemoryResponse,
  type ListMemoriesResponse,
  type Memory,
  type MemoryInsertResponse,
  type Metadata,
  type MemoryType,
} from '@mnemo/client';
import type { App } from '../context.js';
import { clip, keyValues, table } from '../output.js';
import { memoryType, metadata, number, positiveInt, range } from '../parse.js';
import { defined, ownerFrom, ownerOptions, type OwnerFlags } from './shared.js';

type Action = (app: App, ...args: never[]) => Promise<void>;
export type Bind = (action: Action) => (...args: unknown[]) => Promise<void>;

function formatInsert(result: MemoryInsertResponse): string {
  const head = result.deduped
    ? `not stored again: ${result.memory_id} already holds this (${result.dedupe_kind ?? 'duplicate'})`
    : `stored ${result.memory_id}`;
  return [
    head,
    keyValues([
      ['chunks', result.chunks],
      ['extraction', result.extraction.status],
      ['superseded', result.superseded_memory_id],
      ['pii_hints', result.safety?.pii_hints.join(', ')],
    ]),
  ]
    .filter(Boolean)
    .join('\n');
}

function formatList({ results, page, page_size, total, has_more }: ListMemoriesResponse): string {
  if (results.length === 0) return total === 0 ? 'no memories' : `no memories on page ${page}`;
  const rows = results.map((memory) => [
    memory.id,
    memory.memory_type,
    `${memory.owner_type}:${memory.owner_id}`,
    memory.created_at,
    clip(memory.text, 60),
  ]);
  const footer = `page ${page} (${page_size} per page), ${total} in total${has_more ? `; next: --page ${page + 1}` : ''}`;
  return `${table([['ID', 'TYPE', 'OWNER', 'CREATED', 'TEXT'], ...rows])}\n\n${footer}`;
}

function formatMemory(memory: Memory): string {
  const fields = keyValues([
    ['id', memory.id],
    ['owner', `${memory.owner_type}:${memory.owner_id}`],
    ['type', memory.memory_type],
    ['state', memory.lifecycle_state],
    ['importance', memory.importance],
    ['scope', memory.scope],
    ['namespace', memory.namespace],
    ['containerTag', memory.containerTag],
    ['metadata', Object.keys(memory.metadata).length > 0 ? memory.metadata : undefined],
    ['chunks', memory.chunks],
    ['parent', memory.parent_memory_id],
    ['replaced_by', memory.replaced_by_memory_id],
    ['effective_at', memory.effective_at],
    ['expires_at', memory.expires_at],
    ['created_at', memory.created_at],
    ['updated_at', memory.updated_at],
  ]);
  return `${fields}\n\n${memory.text}`;
}

interface AddFlags extends OwnerFlags {
  type?: MemoryType;
  metadata?: Metadata;
  scope?: string;
  namespace?: string;
  containerTag?: string;
  importance?: number;
  idempotencyKey?: string;
  extract: boolean;
  replaces?: string;
  piiScan?: boolean;
}

/** `mnemo add <text>`: store one memory. */
export function addCommand(bind: Bind): Command {
  return ownerOptions(new Command('add'))
    .description('Store a memory')
    .argument('<text>', 'the memory: one self-contained statement')
    .addOption(new Option('--type <type>', 'memory type').argParser(memoryType))
    .option('--metadata <json>', 'metadata as a JSON object', metadata)
    .option('--scope <label>', 'scope label')
    .option('--namespace <label>', 'namespace label')
    .option('--container-tag <label>', 'container tag')
    .option('--importance <n>', `ranking weight, ${range(LIMITS.importance)}`, number)
    .option('--replaces <memory-id>', 'memory this one supersedes')
    .option(
      '--idempotency-key <key>',
      `retrying with the same key never stores twice (${range(LIMITS.idempotencyKey)} chars)`,
    )
    .option('--no-extract', 'store only this memory, no extracted children')
    .option('--pii-scan', 'report email/phone hints found in the text')
    .action(
      bind(async ({ client, output }: App, text: string, flags: AddFlags) => {
        const result = await client.memories.add(
          defined({
            text,
            ...ownerFrom(flags),
            memory_type: flags.type,
            metadata: flags.metadata,
            scope: flags.scope,
            namespace: flags.namespace,
            containerTag: flags.containerTag,
            importance: flags.importance,
            replaces_memory_id: flags.replaces,
            idempotency_key: flags.idempotencyKey,
            extract: flags.extract ? undefined : false,
          }),
          { piiScan: flags.piiScan === true },
        );
        output.result(result, formatInsert);
      }),
    );
}

interface ListFlags extends OwnerFlags {
  namespace?: string;
  type?: MemoryType;
  metadata?: Metadata;
  page?: number;
  pageSize?: number;
}

/** `mnemo list`: one page of memories, newest first. */
export function listCommand(bind: Bind): Command {
  return ownerOptions(new Command('list'))
    .description('List memories, newest first')
    .option('--namespace <label>', 'only this namespace')
    .addOption(new Option('--type <type>', 'only this memory type').argParser(memoryType))
    .option('--metadata <json>', 'only memories whose metadata holds these pairs', metadata)
    .option('--page <n>', 'page, from 1', positiveInt)
    .option('--page-size <n>', `memories per page, ${range(LIMITS.listPageSize)}`, positiveInt)
    .action(
      bind(async ({ client, output }: App, flags: ListFlags) => {
        const page = await client.memories.list(
          defined({
            ...ownerFrom(flags),
            namespace: flags.namespace,
            memory_type: flags.type,
            metadata: flags.metadata,
            page: flags.page,
            page_size: flags.pageSize,
          }),
        );
        output.result(page, formatList);
      }),
    );
}

/** `mnemo get <id>`. */
export function getCommand(bind: Bind): Command {
  return new Command('get')
    .description('Show one memory')
    .argument('<id>', 'memory id')
    .action(
      bind(async ({ client, output }: App, id: string) => {
        output.result(await client.memories.get(id), formatMemory);
      }),
    );
}

/** `mnemo delete <id>`. */
export function deleteCommand(bind: Bind): Command {
  return new Command('delete')
    .description('Delete a memory with its chunks and links')
    .argument('<id>', 'memory id')
    .action(
      bind(async ({ client, output }: App, id: string) => {
        output.result(
          await client.memories.delete(id),
          (result: DeleteMemoryResponse) => `deleted ${result.id}`,
        );
      }),
    );
}

import type { DeleteMemoryResponse, ListMemoriesResponse, Memory } from '@mnemo/client';
import { UsageError, type Command } from '../command.js';
import { clip, keyValues, table } from '../output.js';

function positiveInt(name: string, raw: string | boolean | undefined, command: Command) {
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new UsageError(`--${name} must be a positive integer, got "${raw}"`, command);
  }
  return Number(raw);
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

/** `mnemo memories list`: one page of memories, newest first. */
export const listMemories: Command = {
  words: ['memories', 'list'],
  options: {
    'user-id': { type: 'string' },
    page: { type: 'string' },
    'page-size': { type: 'string' },
  },
  synopsis: '[--user-id ID] [--page N] [--page-size N]',
  summary: 'List memories, newest first',
  async action({ client, output, options }) {
    const page = await client.memories.list({
      user_id: typeof options['user-id'] === 'string' ? options['user-id'] : undefined,
      page: positiveInt('page', options.page, listMemories),
      page_size: positiveInt('page-size', options['page-size'], listMemories),
    });
    output.result(page, formatList);
  },
};

/** `mnemo memories get <id>`: one memory with its fields and text. */
export const getMemory: Command = {
  words: ['memories', 'get'],
  args: ['id'],
  summary: 'Show one memory',
  async action({ client, output, args: [id = ''] }) {
    output.result(await client.memories.get(id), formatMemory);
  },
};

/** `mnemo memories delete <id>`: delete a memory with its chunks and links. */
export const deleteMemory: Command = {
  words: ['memories', 'delete'],
  args: ['id'],
  summary: 'Delete a memory with its chunks and links',
  async action({ client, output, args: [id = ''] }) {
    output.result(
      await client.memories.delete(id),
      (result: DeleteMemoryResponse) => `deleted ${result.id}`,
    );
  },
};

export const memoriesCommands: readonly Command[] = [listMemories, getMemory, deleteMemory];

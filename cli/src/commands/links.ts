import { Command } from 'commander';
import type { CreateLinkResponse, DeleteLinkResponse, MemoryLink } from '@mnemo/client';
import type { App } from '../context.js';
import { table } from '../output.js';
import type { Bind } from './memories.js';

interface RelationFlags {
  relation?: string;
}

const edge = (link: MemoryLink) => `${link.source_id} -[${link.relation}]-> ${link.target_id}`;

/** `mnemo links add|remove|list`: typed edges between two memories of one owner. */
export function linksCommand(bind: Bind): Command {
  const add = new Command('add')
    .description('Link a memory to another of the same owner (context follows links)')
    .argument('<memory-id>', 'the memory the edge starts from')
    .argument('<target-id>', 'the memory it points to')
    .option('--relation <slug>', 'lower-case slug, e.g. mentions or part_of (default: related)')
    .action(
      bind(async ({ client, output }: App, id: string, target: string, flags: RelationFlags) => {
        const result = await client.links.add(id, {
          target_id: target,
          ...(flags.relation !== undefined ? { relation: flags.relation } : {}),
        });
        output.result(
          result,
          (r: CreateLinkResponse) => `${r.created ? 'linked' : 'already linked'}: ${edge(r.link)}`,
        );
      }),
    );
  const remove = new Command('remove')
    .description('Delete the links from a memory to a target (one relation, or all)')
    .argument('<memory-id>', 'the memory the edge starts from')
    .argument('<target-id>', 'the memory it points to')
    .option('--relation <slug>', 'only this relation (default: every relation)')
    .action(
      bind(async ({ client, output }: App, id: string, target: string, flags: RelationFlags) => {
        const result = await client.links.remove(id, {
          target_id: target,
          ...(flags.relation !== undefined ? { relation: flags.relation } : {}),
        });
        output.result(result, (r: DeleteLinkResponse) =>
          [
            `deleted ${r.deleted.length} link${r.deleted.length === 1 ? '' : 's'}`,
            ...r.deleted.map((l) => `  ${edge(l)}`),
          ].join('\n'),
        );
      }),
    );
  const list = new Command('list')
    .description('Links with a memory at either end')
    .argument('<memory-id>', 'the memory')
    .action(
      bind(async ({ client, output }: App, id: string) => {
        output.result(await client.links.list(id), (r) =>
          r.results.length === 0
            ? 'no links'
            : table([
                ['SOURCE', 'RELATION', 'TARGET'],
                ...r.results.map((l) => [l.source_id, l.relation, l.target_id]),
              ]),
        );
      }),
    );
  return new Command('links')
    .description('Links between memories (operator routes)')
    .addCommand(add)
    .addCommand(remove)
    .addCommand(list);
}

import { Command } from 'commander';
import type { PinsResponse } from '@mnemo/client';
import type { App } from '../context.js';
import { clip, table } from '../output.js';
import type { Bind } from './memories.js';
import { ownerFrom, ownerOptions, type OwnerFlags } from './shared.js';

function formatPins(result: PinsResponse): string {
  const owner = `${result.owner_type}:${result.owner_id}`;
  if (result.pins.length === 0) return `${owner} has no pins`;
  const rows = result.pins.map((pin) => [pin.memory_id, pin.lifecycle_state, clip(pin.text, 60)]);
  return `${table([['MEMORY', 'STATE', 'TEXT'], ...rows])}\n\n${owner}: ${result.pins.length} of ${result.max_pins} pins (shown first in context)`;
}

/** `mnemo pins list`, `mnemo pins add <id…>`, `mnemo pins remove <id…>`: an owner's profile pins. */
export function pinsCommand(bind: Bind): Command {
  const change = (name: 'add' | 'remove') =>
    ownerOptions(new Command(name))
      .description(
        name === 'add'
          ? "Pin live memories of the owner: they come first in the owner's context"
          : 'Unpin memories of the owner',
      )
      .argument('<memory-ids...>', 'memory ids')
      .action(
        bind(async ({ client, output }: App, memoryIds: string[], flags: OwnerFlags) => {
          const ids = name === 'add' ? { pin: memoryIds } : { unpin: memoryIds };
          output.result(await client.pins.update({ ...ownerFrom(flags), ...ids }), formatPins);
        }),
      );
  const list = ownerOptions(new Command('list'))
    .description("The owner's pins, in pin order")
    .action(
      bind(async ({ client, output }: App, flags: OwnerFlags) => {
        output.result(await client.pins.get(ownerFrom(flags)), formatPins);
      }),
    );
  return new Command('pins')
    .description("An owner's pinned memories, shown first in its context (operator routes)")
    .addCommand(list)
    .addCommand(change('add'))
    .addCommand(change('remove'));
}

import type { Command } from './command.js';
import { health } from './commands/health.js';
import { memoriesCommands } from './commands/memories.js';

/** Every command, in the order help lists them. */
export const COMMANDS: readonly Command[] = [health, ...memoriesCommands];

const GLOBAL_HELP = `Options:
  --base-url URL   service root (default: $MNEMO_BASE_URL or http://127.0.0.1:8787)
  --api-key KEY    API key (default: $MNEMO_API_KEY)
  --json           print results as JSON
  -h, --help       show help`;

function synopsis(command: Command): string {
  const args = (command.args ?? []).map((name) => `<${name}>`);
  return ['mnemo', ...command.words, ...args, command.synopsis ?? ''].join(' ').trim();
}

/** Help for one command, or for the whole CLI. */
export function usage(command?: Command): string {
  if (command)
    return `Usage: ${synopsis(command)} [options]\n\n${command.summary}\n\n${GLOBAL_HELP}`;
  const lines = COMMANDS.map((entry) => [synopsis(entry), entry.summary] as const);
  const width = Math.max(...lines.map(([left]) => left.length));
  const list = lines.map(([left, summary]) => `  ${left.padEnd(width)}  ${summary}`).join('\n');
  return `Usage: mnemo <command> [options]\n\nCommands:\n${list}\n\n${GLOBAL_HELP}`;
}

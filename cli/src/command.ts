import type { MnemoClient } from '@mnemo/client';
import type { Output } from './output.js';

/** Option declarations in the shape `node:util` parseArgs takes. */
export type OptionSpecs = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** What an action receives: a ready client, the output, and its own arguments. */
export interface CommandContext {
  client: MnemoClient;
  output: Output;
  /** Positional arguments after the command words, in `Command.args` order. */
  args: string[];
  /** Values of the options the command declared (undefined when not given). */
  options: Record<string, string | boolean | undefined>;
}

/** One CLI command; each file in commands/ exports its commands. */
export interface Command {
  /** The words that select it, e.g. `['memories', 'list']`. */
  words: readonly string[];
  /** Names of the required positional arguments, e.g. `['id']`. */
  args?: readonly string[];
  options?: OptionSpecs;
  /** The synopsis after the command words, e.g. `[--page N]`. */
  synopsis?: string;
  summary: string;
  action(context: CommandContext): Promise<void>;
}

/** Wrong usage: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  constructor(
    message: string,
    /** The command whose usage to show; the whole CLI's when absent. */
    readonly command?: Command,
  ) {
    super(message);
  }
}

import { parseArgs } from 'node:util';
import { DEFAULT_BASE_URL, MnemoClient, type Fetch } from '@mnemo/client';
import { UsageError, type Command, type OptionSpecs } from './command.js';
import { handleError } from './handle-error.js';
import { Output, type Writer } from './output.js';
import { COMMANDS, usage } from './usage.js';

/** What `run` talks to; `index.ts` passes the process's, tests pass their own. */
export interface RunContext {
  stdout: Writer;
  stderr: Writer;
  /** Sends the requests; default `globalThis.fetch`. */
  fetch?: Fetch;
  /** Read for MNEMO_BASE_URL and MNEMO_API_KEY; nothing else is read from the environment. */
  env?: Record<string, string | undefined>;
}

const GLOBAL_OPTIONS = {
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

// Parsed once with every command's options so that `--page 2` is never mistaken for a flag
// followed by a positional; which options a command accepts is checked afterwards.
const ALL_OPTIONS: OptionSpecs = Object.assign(
  {},
  ...COMMANDS.map((command) => command.options ?? {}),
  GLOBAL_OPTIONS,
);

function findCommand(words: readonly string[]): Command | undefined {
  return COMMANDS.find((command) => command.words.every((word, index) => words[index] === word));
}

function nonEmpty(value: string | boolean | undefined): string | undefined {
  return typeof value !== 'string' || value.trim() === '' ? undefined : value;
}

/**
 * Runs the CLI once and resolves to its exit code: 0 success, 1 the call failed, 2 usage error.
 * Never calls `process.exit`, so tests drive it in-process.
 */
export async function run(argv: readonly string[], context: RunContext): Promise<number> {
  const env = context.env ?? {};
  let output = new Output(context.stdout, context.stderr, argv.includes('--json'));

  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: [...argv],
        options: ALL_OPTIONS,
        allowPositionals: true,
        strict: true,
        tokens: true,
      });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const { values, positionals, tokens } = parsed;
    output = new Output(context.stdout, context.stderr, values.json === true);

    if (positionals.length === 0 || (positionals.length === 1 && positionals[0] === 'help')) {
      if (values.help === true || positionals[0] === 'help') {
        output.info(usage());
        return 0;
      }
      throw new UsageError('missing command');
    }

    const command = findCommand(positionals);
    if (!command) {
      const group = COMMANDS.filter(
        (entry) => entry.words.length > 1 && entry.words[0] === positionals[0],
      );
      if (group.length > 0 && positionals.length === 1) {
        const subcommands = group.map((entry) => entry.words.slice(1).join(' ')).join(', ');
        throw new UsageError(`"${positionals[0]}" needs a subcommand: ${subcommands}`);
      }
      throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    }
    if (values.help === true) {
      output.info(usage(command));
      return 0;
    }

    const allowed = new Set([
      ...Object.keys(GLOBAL_OPTIONS),
      ...Object.keys(command.options ?? {}),
    ]);
    for (const token of tokens) {
      if (token.kind === 'option' && !allowed.has(token.name)) {
        throw new UsageError(`${command.words.join(' ')} does not take --${token.name}`, command);
      }
    }
    const args = positionals.slice(command.words.length);
    const expected = command.args ?? [];
    if (args.length < expected.length) {
      throw new UsageError(`missing <${expected[args.length]}>`, command);
    }
    if (args.length > expected.length) {
      throw new UsageError(`unexpected argument "${args[expected.length]}"`, command);
    }

    const baseUrl =
      nonEmpty(values['base-url']) ?? nonEmpty(env.MNEMO_BASE_URL) ?? DEFAULT_BASE_URL;
    if (!URL.canParse(baseUrl)) throw new UsageError(`--base-url must be a URL, got "${baseUrl}"`);
    const client = new MnemoClient({
      baseUrl,
      // null, not undefined: the client would otherwise fall back to the real process.env.
      apiKey: nonEmpty(values['api-key']) ?? nonEmpty(env.MNEMO_API_KEY) ?? null,
      fetch: context.fetch,
    });

    const options = Object.fromEntries(
      Object.keys(command.options ?? {}).map((name) => [name, values[name]]),
    );
    await command.action({ client, output, args, options });
    return 0;
  } catch (error) {
    return handleError(error, output);
  }
}

import { Command, CommanderError } from 'commander';
import {
  DEFAULT_BASE_URL,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TRANSPORT,
  TRANSPORT_KINDS,
  type MemoryClient,
} from '@mnemo/client';
import { appFor, type App, type RunContext } from './context.js';
import { auditCommand } from './commands/audit.js';
import { healthCommand, usageCommand } from './commands/health.js';
import { importCommand } from './commands/import.js';
import { ingestCommand } from './commands/ingest.js';
import { linksCommand } from './commands/links.js';
import { historyCommand } from './commands/history.js';
import { pinsCommand } from './commands/pins.js';
import { eraseCommand, exportCommand } from './commands/owner-data.js';
import { webhooksCommand } from './commands/webhooks.js';
import {
  addCommand,
  deleteCommand,
  getCommand,
  listCommand,
  type Bind,
} from './commands/memories.js';
import { contextCommand, feedbackCommand, searchCommand } from './commands/search.js';
import { EXIT_USAGE, handleError } from './handle-error.js';
import { Output } from './output.js';
import { orList } from './parse.js';

export type { RunContext } from './context.js';

export const VERSION = '0.1.0';

/** The `mnemo` program; `bind` turns an action into a commander action with a ready App. */
export function createProgram(context: RunContext, bind: Bind): Command {
  const program = new Command('mnemo')
    .description('Command-line interface of the Mnemo memory service')
    .version(VERSION, '-V, --version')
    .option(
      '--base-url <url>',
      `service root (default: $MNEMO_BASE_URL, the config file, or ${DEFAULT_BASE_URL})`,
    )
    .option('--api-key <key>', 'API key (default: $MNEMO_API_KEY or the config file)')
    .option(
      '--config <path>',
      'config file (default: $MNEMO_CONFIG or ~/.config/mnemo/config.json)',
    )
    .option('--timeout <ms>', `per-attempt timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS})`)
    .option(
      '--transport <kind>',
      `how search and context travel: ${orList([
        `${DEFAULT_TRANSPORT} (default)`,
        ...TRANSPORT_KINDS.filter((kind) => kind !== DEFAULT_TRANSPORT),
      ])}`,
    )
    .option('--json', 'print results as JSON (errors as JSON on stderr)')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
    })
    .exitOverride();
  for (const make of [
    addCommand,
    searchCommand,
    contextCommand,
    getCommand,
    listCommand,
    deleteCommand,
    feedbackCommand,
    usageCommand,
    healthCommand,
    importCommand,
    ingestCommand,
    linksCommand,
    historyCommand,
    pinsCommand,
    auditCommand,
    exportCommand,
    eraseCommand,
    webhooksCommand,
  ]) {
    program.addCommand(
      make(bind)
        .configureOutput({
          writeOut: (text) => context.stdout.write(text),
          writeErr: (text) => context.stderr.write(text),
        })
        .exitOverride(),
    );
  }
  // Nested commands (`ingest conversation`) print and fail like the others.
  for (const parent of program.commands) {
    for (const sub of parent.commands) {
      sub
        .configureOutput({
          writeOut: (text) => context.stdout.write(text),
          writeErr: (text) => context.stderr.write(text),
        })
        .exitOverride();
    }
  }
  return program;
}

/**
 * Runs the CLI once and resolves to its exit code: 0 success, 1 the call failed, 2 usage error.
 * Never calls `process.exit`, so tests drive it in-process.
 */
export async function run(rawArgv: readonly string[], context: RunContext): Promise<number> {
  // `pnpm mnemo -- health` passes the separator through.
  const argv = rawArgv[0] === '--' ? rawArgv.slice(1) : rawArgv;
  const clients: MemoryClient[] = [];
  let output = new Output(context.stdout, context.stderr, argv.includes('--json'));
  const bind: Bind =
    (action) =>
    async (...args: unknown[]) => {
      // commander passes the declared arguments, then the options, then the command.
      const command = args[args.length - 1] as Command;
      const app: App = appFor(command, context, clients);
      output = app.output;
      await (action as (app: App, ...rest: unknown[]) => Promise<void>)(app, ...args.slice(0, -1));
    };
  const program = createProgram(context, bind);
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT_USAGE;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version print to stdout and succeed; commander already printed its error line.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      if (error.code === 'commander.help') return 0;
      return EXIT_USAGE;
    }
    return handleError(error, output);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

import { MemoryClient, type Fetch } from '@mnemo/client';
import type { Command } from 'commander';
import { ConfigError, resolveConfig, type ConfigFlags } from './config.js';
import { Output, type Writer } from './output.js';

/** What `run` talks to; `index.ts` passes the process's, tests pass their own. */
export interface RunContext {
  stdout: Writer;
  stderr: Writer;
  /** Sends the requests; default `globalThis.fetch`. */
  fetch?: Fetch | undefined;
  /** Read for MNEMO_BASE_URL, MNEMO_API_KEY, MNEMO_CONFIG, XDG_CONFIG_HOME and HOME only. */
  env?: Record<string, string | undefined> | undefined;
  /** Whether stderr is a terminal: `import` draws a progress bar only then. */
  isTTY?: boolean | undefined;
}

/** The global options every command accepts. */
export interface GlobalOptions extends ConfigFlags {
  json?: boolean | undefined;
}

/** What an action gets: its output and a client made from the resolved configuration. */
export interface App {
  output: Output;
  client: MemoryClient;
  context: RunContext;
}

/** Commands whose route is public (the spec's health routes): they run without an API key. */
const PUBLIC_COMMANDS: ReadonlySet<string> = new Set(['health']);

/** Builds the App of the command being run, from its global options (commander's optsWithGlobals). */
export function appFor(command: Command, context: RunContext, clients: MemoryClient[]): App {
  const options = command.optsWithGlobals<GlobalOptions>();
  const output = new Output(context.stdout, context.stderr, options.json === true);
  const config = resolveConfig(options, context.env ?? {});
  if (config.apiKey === undefined && !PUBLIC_COMMANDS.has(command.name())) {
    // Said here rather than learnt from a 401: no request leaves without a key.
    throw new ConfigError(
      `no API key: set MNEMO_API_KEY or pass --api-key (or put apiKey in ${config.source.configFile})`,
    );
  }
  const client = new MemoryClient({
    baseUrl: config.baseUrl,
    // null, not undefined: the client would otherwise fall back to the real process.env.
    apiKey: config.apiKey ?? null,
    timeoutMs: config.timeoutMs,
    transport: config.transport,
    fetch: context.fetch,
  });
  clients.push(client);
  return { output, client, context };
}

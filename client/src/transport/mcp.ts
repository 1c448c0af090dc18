import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ERROR_STATUS } from '@mnemo/contract';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  MnemoError,
  errorFromResponse,
} from '../core/errors.js';
import type { Fetch } from '../internal/fetch-with-timeout.js';
import { anySignal, present, throwIfAborted } from '../internal/signals.js';

export interface McpTransportOptions {
  baseUrl: string;
  apiKey: string | undefined;
  fetch: Fetch;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Reported to the server in `initialize`. */
  clientVersion: string;
}

/** A successful tool call: its `structuredContent` (the REST response's shape, plus `request_id`). */
export type ToolResult = Record<string, unknown>;

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

interface McpSdk {
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
}

/** How long hybrid stays on REST after its background MCP open failed, before trying again. */
export const WARM_RETRY_MS = 30_000;

/** The optional peer dependency that carries the MCP protocol. */
export const MCP_SDK_PACKAGE = '@modelcontextprotocol/sdk';

/**
 * Loads the MCP SDK, an optional peer dependency. The specifiers are held in variables so that
 * bundlers neither require the package at build time nor pull it into browser bundles of
 * REST-only apps; the bundler comments keep webpack and Vite from warning about it.
 */
async function loadSdk(): Promise<McpSdk> {
  const clientModule = `${MCP_SDK_PACKAGE}/client/index.js`;
  const transportModule = `${MCP_SDK_PACKAGE}/client/streamableHttp.js`;
  try {
    const [{ Client }, { StreamableHTTPClientTransport }] = (await Promise.all([
      import(/* webpackIgnore: true */ /* @vite-ignore */ clientModule),
      import(/* webpackIgnore: true */ /* @vite-ignore */ transportModule),
    ])) as [McpSdk, McpSdk];
    return { Client, StreamableHTTPClientTransport };
  } catch (cause) {
    throw new MnemoError({
      code: 'MCP_SDK_MISSING',
      message:
        `The MCP transport needs the optional package ${MCP_SDK_PACKAGE}: ` +
        `npm install ${MCP_SDK_PACKAGE} (or use transport: 'rest')`,
      cause,
    });
  }
}

/**
 * The MCP transport: calls the hosted tools (`search_memories`, `get_context`) at
 * `{baseUrl}/v1/mcp` with the MCP SDK's `Client` over streamable HTTP. The session is opened on
 * the first call (or ahead of it by `warm()`) and reused; `close()` ends it (DELETE). A failed
 * connection is forgotten so that the next call opens a new one. A tool error becomes the same
 * `MnemoError` subclass REST would throw, read from the error envelope the server puts in the
 * result's second text part.
 */
export class McpTransport {
  #session: Promise<Session> | undefined;
  /** The session once its handshake finished: hybrid routes over MCP only then. */
  #ready: Session | undefined;
  /** Aborts a handshake still running when `close()` is called. */
  #opening: AbortController | undefined;
  /** Set once the SDK failed to load: it will not load later either. */
  #missingSdk: MnemoError | undefined;
  /** After a failed background open, `warm()` waits this long before trying again. */
  #warmBlockedUntil = 0;

  constructor(readonly options: McpTransportOptions) {}

  /** True once a session was opened (or is being opened). */
  get connected(): boolean {
    return this.#session !== undefined;
  }

  /** True when a session has finished its handshake and a tool call needs no round trip first. */
  get ready(): boolean {
    return this.#ready !== undefined;
  }

  /** False once the MCP SDK turned out not to be installed. */
  get available(): boolean {
    return this.#missingSdk === undefined;
  }

  /**
   * Starts opening the session in the background, if none is open or opening and the SDK can
   * load. After a failure it tries again only `WARM_RETRY_MS` later, so that a server without a
   * reachable MCP endpoint does not get a handshake beside every search. Never throws.
   */
  warm(): void {
    if (this.#session !== undefined || this.#missingSdk !== undefined) return;
    if (Date.now() < this.#warmBlockedUntil) return;
    if (present([this.options.signal]).some((signal) => signal.aborted)) return;
    this.#open(this.options.signal, this.options.timeoutMs).then(
      () => {
        this.#warmBlockedUntil = 0;
      },
      () => {
        this.#forget();
        this.#warmBlockedUntil = Date.now() + WARM_RETRY_MS;
      },
    );
  }

  /** Opens the session now (or waits for the one being opened). */
  async connect({
    signal,
    timeoutMs,
  }: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined } = {}): Promise<void> {
    const signals = [this.options.signal, signal];
    throwIfAborted(signals);
    const timeout = timeoutMs ?? this.options.timeoutMs;
    const combined = anySignal(signals);
    try {
      await this.#open(combined.signal, timeout);
    } catch (error) {
      this.#forget();
      throw this.#asError(error, signals, timeout);
    } finally {
      combined.dispose();
    }
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    {
      signal,
      timeoutMs,
    }: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined } = {},
  ): Promise<ToolResult> {
    const signals = [this.options.signal, signal];
    throwIfAborted(signals);
    const timeout = timeoutMs ?? this.options.timeoutMs;
    const combined = anySignal(signals);
    try {
      let session: Session;
      try {
        session = await this.#open(combined.signal, timeout);
      } catch (error) {
        this.#forget();
        throw error;
      }
      let result;
      try {
        result = await session.client.callTool({ name, arguments: args }, undefined, {
          signal: combined.signal,
          timeout,
        });
      } catch (error) {
        // The session may be gone (expired, server restarted): start afresh next time, and
        // end this one on the server (DELETE) rather than leave it open there.
        this.#forget();
        void abandon(session);
        throw error;
      }
      if (result.isError === true) throw toolError(name, result.content);
      const structured = result.structuredContent;
      if (typeof structured !== 'object' || structured === null) {
        throw new MnemoError({
          code: 'INVALID_RESPONSE',
          message: `MCP tool ${name} returned no structuredContent`,
        });
      }
      return structured as ToolResult;
    } catch (error) {
      throw this.#asError(error, signals, timeout);
    } finally {
      combined.dispose();
    }
  }

  /**
   * Ends the session (HTTP DELETE) if one is open, and abandons a handshake still running rather
   * than waiting for it. Safe to call more than once.
   */
  async close(): Promise<void> {
    const pending = this.#session;
    const ready = this.#ready;
    this.#opening?.abort();
    this.#forget();
    if (!pending) return;
    const session = ready ?? (await pending.catch(() => undefined));
    if (!session) return;
    await session.transport.terminateSession().catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }

  #forget(): void {
    this.#session = undefined;
    this.#ready = undefined;
    this.#opening = undefined;
  }

  #asError(
    error: unknown,
    signals: ReadonlyArray<AbortSignal | undefined>,
    timeoutMs: number,
  ): MnemoError {
    if (error instanceof MnemoError) return error;
    const aborted = present(signals).find((given) => given.aborted);
    if (aborted) return new APIUserAbortError({ cause: aborted.reason });
    return asMnemoError(error, timeoutMs);
  }

  /**
   * The session, opened once: the handshake runs under its own controller (so `close()` can end
   * it) and stops early when `signal` fires.
   */
  #open(signal: AbortSignal | undefined, timeout: number): Promise<Session> {
    if (this.#missingSdk) return Promise.reject(this.#missingSdk);
    if (this.#session) return this.#session;
    const opening = new AbortController();
    const handshake = anySignal([opening.signal, signal]);
    this.#opening = opening;
    const session = (async () => {
      let sdk: McpSdk;
      try {
        sdk = await loadSdk();
      } catch (error) {
        this.#missingSdk = error as MnemoError;
        throw error;
      }
      const headers: Record<string, string> = {};
      if (this.options.apiKey !== undefined)
        headers.authorization = `Bearer ${this.options.apiKey}`;
      const fetch = this.options.fetch;
      const transport = new sdk.StreamableHTTPClientTransport(
        new URL(`${this.options.baseUrl}/v1/mcp`),
        {
          requestInit: { headers },
          fetch: (url, init) => fetch(String(url), init ?? {}),
        },
      );
      const client = new sdk.Client({ name: '@mnemo/client', version: this.options.clientVersion });
      try {
        await client.connect(transport, { signal: handshake.signal, timeout });
      } catch (error) {
        // The initialize may have opened a session before the handshake failed.
        void abandon({ client, transport });
        throw error;
      }
      return { client, transport };
    })().finally(() => handshake.dispose());
    this.#session = session;
    session.then(
      (opened) => {
        // Only if this is still the current session: close() ends one it dropped meanwhile.
        if (this.#session === session) {
          this.#ready = opened;
          this.#opening = undefined;
        }
      },
      () => undefined,
    );
    return session;
  }
}

/**
 * Ends a session the client stops using: DELETE when the server gave it an id (a session that is
 * already gone answers 404, which changes nothing), then the SDK client.
 */
async function abandon(session: Session): Promise<void> {
  if (session.transport.sessionId !== undefined)
    await session.transport.terminateSession().catch(() => undefined);
  await session.client.close().catch(() => undefined);
}

/** MCP JSON-RPC error code of a request that got no answer within its timeout. */
const MCP_REQUEST_TIMEOUT = -32001;

/**
 * An SDK failure as the client's error classes: an HTTP error of the MCP endpoint (the SDK's
 * StreamableHTTPError carries the status in `code` and the body in its message) maps like a REST
 * answer; an unanswered request is a timeout; anything else is a connection error.
 */
function asMnemoError(error: unknown, timeoutMs: number): MnemoError {
  const code =
    typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (code === MCP_REQUEST_TIMEOUT) return new APITimeoutError({ timeoutMs });
  if (
    error instanceof Error &&
    error.name !== 'McpError' &&
    typeof code === 'number' &&
    code >= 400 &&
    code < 600
  ) {
    const json = message.indexOf('{');
    let body: unknown = message;
    if (json >= 0) {
      try {
        body = JSON.parse(message.slice(json));
      } catch {
        // not JSON: keep the text
      }
    }
    const mapped = errorFromResponse(code, body, new Headers());
    return mapped;
  }
  return new APIConnectionError({ message: `MCP connection error: ${message}`, cause: error });
}

/** The error envelope in a tool error's second text part, as the REST error it mirrors. */
function toolError(name: string, content: unknown): MnemoError {
  const parts = Array.isArray(content) ? content : [];
  const texts = parts
    .filter(
      (part): part is { type: 'text'; text: string } =>
        typeof part === 'object' &&
        part !== null &&
        part.type === 'text' &&
        typeof part.text === 'string',
    )
    .map((part) => part.text);
  for (const text of texts.slice(1)) {
    try {
      const body: unknown = JSON.parse(text);
      if (typeof body === 'object' && body !== null && 'error' in body) {
        const code = (body as { error: { code?: unknown } }).error.code;
        const status =
          typeof code === 'string' && code in ERROR_STATUS
            ? ERROR_STATUS[code as keyof typeof ERROR_STATUS]
            : 500;
        return errorFromResponse(status, body, new Headers());
      }
    } catch {
      // not the envelope part
    }
  }
  return new MnemoError({
    code: 'MCP_TOOL_ERROR',
    message: `MCP tool ${name} failed: ${texts[0] ?? 'no message'}`,
  });
}

// The low-level Server, not McpServer: McpServer validates tool arguments itself and reports a
// failure as "MCP error -32602: Input validation error: …", before our handler could run. Mnemo's
// tools validate with the contract's schemas (refinements included) and answer every failure the
// way REST does, `BAD_REQUEST: …` with per-field details, so the tool handlers are ours.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../logger.js';
import type { Operations } from '../operations/index.js';
import { ServiceError } from '../errors.js';
import { noteMcpTool } from '../http/completion.js';
import { errorEnvelope } from '../http/errors.js';
import { callerOf } from '../http/request-inputs.js';
import { currentHttpRequest } from './context.js';
import { toolJsonSchema, toolOutputJsonSchema } from './schema.js';
import { TOOLS } from './tools.js';
import { unavailableError } from '../db/faults.js';

export const MCP_SERVER_NAME = 'mnemo';

const INSTRUCTIONS = [
  'Mnemo is the long-term memory of this application: memories are short texts stored for an owner',
  '(owner_id: your end user, a team or the app; no owner_id means the app-wide default owner).',
  'Before answering something that depends on what is known about a user, call search_memories or',
  'get_context with their owner_id. When the user states a lasting fact, preference or correction,',
  'store it with add_memory, one self-contained statement per memory. After using search results,',
  'call send_feedback with the request_id they came with to say whether they helped.',
].join(' ');

/** The listed catalog, converted once: every session lists the same tools. */
let catalog: Tool[] | undefined;

export function toolCatalog(): Tool[] {
  catalog ??= TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolJsonSchema(tool.input),
    outputSchema: toolOutputJsonSchema(tool.output),
    annotations: { title: tool.title, ...tool.annotations },
  }));
  return catalog;
}

/**
 * An unexpected tool failure as logged: its type and stack frames, not its message, which may
 * quote the tool's arguments (memory text, a query) back. A database error keeps its SQLSTATE.
 */
function withoutMessage(error: unknown): unknown {
  if (!(error instanceof Error)) return { type: typeof error };
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    ...(typeof code === 'string' ? { code } : {}),
    stack: frames.join('\n'),
  };
}

/** What an MCP server runs its tools with. */
export interface McpServerDeps {
  operations: Operations;
  logger: Logger;
  /** The server's version, as `initialize` reports it. */
  version: string;
}

/**
 * One MCP server per HTTP request (an SDK Server serves one transport; see mcp/sessions.ts). A
 * session belongs to the workspace and key that opened it, so every request reaching it was
 * authenticated as them: a tool call acts for the caller of the HTTP request carrying it.
 */
export function createMcpServer(deps: McpServerDeps): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, title: 'Mnemo memory', version: deps.version },
    { capabilities: { tools: {}, logging: {} }, instructions: INSTRUCTIONS },
  );
  const byName = new Map(TOOLS.map((tool) => [tool.name, tool]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolCatalog() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const httpRequest = currentHttpRequest();
    if (!httpRequest) {
      throw new McpError(ErrorCode.InternalError, 'Tool call outside an HTTP request');
    }
    noteMcpTool(httpRequest, tool.name);
    try {
      const output = await tool.call(
        { operations: deps.operations, caller: callerOf(httpRequest, 'mcp') },
        request.params.arguments,
      );
      return {
        content: [{ type: 'text', text: output.text }],
        structuredContent: output.structured,
      };
    } catch (error) {
      // A database fault is the REST route's 503 SERVICE_UNAVAILABLE here too, not INTERNAL.
      const known = error instanceof ServiceError ? error : unavailableError(error);
      if (!known) {
        deps.logger.error(
          { err: withoutMessage(error), request_id: httpRequest.requestId, tool: tool.name },
          'MCP tool failed',
        );
        // The client gets the request id to quote when reporting the failure, on this call's own
        // stream: a session's requests may each reach another instance, so nothing else is
        // sure to carry it (and no logging/setLevel is kept between them: errors always go).
        void extra
          .sendNotification({
            method: 'notifications/message',
            params: {
              level: 'error',
              logger: MCP_SERVER_NAME,
              data: { tool: tool.name, request_id: httpRequest.requestId },
            },
          })
          .catch(() => undefined);
      }
      return toolError(
        known ?? new ServiceError('INTERNAL', 'Internal server error'),
        httpRequest.requestId,
      );
    }
  });
  return server;
}

/**
 * A tool error the model can read (`CODE: message`, then one line per field) and a program can
 * parse: the second text part is the REST error envelope. The envelope is not structuredContent
 * because clients validate structuredContent against the tool's output schema even on errors.
 */
export function toolError(error: ServiceError, requestId: string): CallToolResult {
  const lines = [`${error.code}: ${error.message}`];
  for (const [field, messages] of Object.entries(error.details ?? {}))
    lines.push(`- ${field}: ${messages.join('; ')}`);
  return {
    isError: true,
    content: [
      { type: 'text', text: lines.join('\n') },
      { type: 'text', text: JSON.stringify(errorEnvelope(error, requestId)) },
    ],
  };
}

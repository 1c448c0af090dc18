import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Express } from 'express';

export interface Listening {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  close(): Promise<void>;
}

/** The app on a real socket: the SDK client speaks HTTP with streams, not supertest. */
export async function listen(app: Express): Promise<Listening> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

/** One HTTP exchange the client made: its JSON-RPC methods (`tools/call <name>`) and the answer. */
export interface Exchange {
  httpMethod: string;
  rpcMethods: string[];
  status: number;
  requestId: string | null;
}

/** The SDK's own client over streamable HTTP, authenticated with `apiKey`; `log` records each exchange. */
export async function connect(
  url: string,
  apiKey: string,
  { headers = {}, log }: { headers?: Record<string, string>; log?: Exchange[] } = {},
): Promise<Connected> {
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (log) {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
      const messages = Array.isArray(body) ? body : body ? [body] : [];
      log.push({
        httpMethod: init?.method ?? 'GET',
        rpcMethods: messages.map((message: { method?: string; params?: { name?: string } }) =>
          message.method === 'tools/call'
            ? `tools/call ${message.params?.name}`
            : String(message.method),
        ),
        status: response.status,
        requestId: response.headers.get('x-request-id'),
      });
    }
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}`, ...headers } },
    fetch: recordingFetch,
  });
  const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** The text of a tool result's first content part. */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  return first?.type === 'text' ? first.text : '';
}

/** The REST error envelope a tool error carries in its second text part. */
export function errorEnvelopeOf(result: unknown): {
  error: { code: string; message: string; details?: Record<string, string[]> };
  request_id: string;
} {
  const part = (result as CallToolResult).content[1];
  if (part?.type !== 'text') throw new Error('tool error has no JSON part');
  return JSON.parse(part.text) as ReturnType<typeof errorEnvelopeOf>;
}

/** A raw `initialize` request, for tests that speak JSON-RPC without the SDK client. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw-test', version: '1.0.0' },
  },
};

/** The Accept header streamable HTTP requires on POST. */
export const ACCEPT = 'application/json, text/event-stream';

import type { Request } from 'express';
import { MCP_SERVER_NAME, toolCatalog } from './server.js';

const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** GET on an MCP path from a browser: what this URL is and how to connect a client to it. */
export function landingPage(req: Request): string {
  const url = escapeHtml(
    `${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}${req.path.replace(/\/$/, '')}`,
  );
  const tools = toolCatalog()
    .map(
      (tool) => `<li><code>${escapeHtml(tool.name)}</code>: ${escapeHtml(tool.title ?? '')}</li>`,
    )
    .join('\n        ');
  const config = escapeHtml(
    JSON.stringify(
      {
        mcpServers: {
          [MCP_SERVER_NAME]: {
            url: '__URL__',
            headers: { Authorization: 'Bearer <MNEMO_API_KEY>' },
          },
        },
      },
      null,
      2,
    ),
  ).replace('__URL__', url);
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Mnemo MCP endpoint</title>
    <style>
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
      pre, code { font: 14px ui-monospace, monospace; background: #f3f3f5; border-radius: 4px; }
      pre { padding: 0.75rem; overflow-x: auto; }
      code { padding: 0 0.2rem; }
    </style>
  </head>
  <body>
    <h1>Mnemo MCP endpoint</h1>
    <p>This URL is Mnemo's hosted <a href="https://modelcontextprotocol.io">Model Context Protocol</a> server.
      AI clients (Claude, Cursor, agents) connect to it to store and recall memories. It speaks MCP's
      <strong>streamable HTTP</strong> transport: JSON-RPC over <code>POST</code>, with sessions
      (<code>Mcp-Session-Id</code>); WebSocket is not supported.</p>
    <h2>Connect a client</h2>
    <p>Every request needs an API key, as <code>Authorization: Bearer &lt;key&gt;</code> or <code>x-api-key: &lt;key&gt;</code>.</p>
    <pre>claude mcp add --transport http ${MCP_SERVER_NAME} ${url} --header "Authorization: Bearer $MNEMO_API_KEY"</pre>
    <p>Clients configured with JSON (Cursor and others):</p>
    <pre>${config}</pre>
    <h2>Tools</h2>
    <ul>
        ${tools}
    </ul>
    <p>More: the <strong>MCP</strong> section of the Mnemo README (<code>README.md</code>, "MCP"), and the REST API's
      <a href="/v1/openapi.json">OpenAPI document</a>.</p>
  </body>
</html>
`;
}

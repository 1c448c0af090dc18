/** Hosted MCP paths: outside the REST Origin denial, under the MCP Origin rule (http/origin.ts). */
export const MCP_PATHS = ['/mcp', '/v1/mcp'];

/** The MCP paths as Express matches them (non-strict routing also accepts a trailing slash). */
export const MCP_PATH_VARIANTS = MCP_PATHS.flatMap((path) => [path, `${path}/`]);

export function isMcpPath(path: string): boolean {
  return MCP_PATH_VARIANTS.includes(path);
}

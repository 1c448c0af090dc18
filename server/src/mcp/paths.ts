/** Hosted MCP paths: exempt from the Origin allowlist (they have their own IP rate limit). */
export const MCP_PATHS = ['/mcp', '/v1/mcp'];

/** The MCP paths as Express matches them (non-strict routing also accepts a trailing slash). */
export const MCP_PATH_VARIANTS = MCP_PATHS.flatMap((path) => [path, `${path}/`]);

export function isMcpPath(path: string): boolean {
  return MCP_PATH_VARIANTS.includes(path);
}

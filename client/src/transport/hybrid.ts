import { APIUserAbortError } from '../core/errors.js';
import type { TransportKind } from '../core/types.js';
import type { McpTransport } from './mcp.js';
import type { RequestOptions, RestTransport, RouteRef } from './rest.js';

/** Fields a search may carry and still go over MCP in hybrid mode. */
export const SIMPLE_SEARCH_FIELDS: ReadonlySet<string> = new Set([
  'query',
  'owner_id',
  'owner_type',
  'top_k',
  'scope',
  'namespace',
  'containerTag',
]);

/**
 * A simple search: only query, owner, top_k, scope, namespace and containerTag. Anything else
 * (filters, search_mode, min_score, retrieval_profile, page, page_size, explain) goes over REST.
 */
export function isSimpleSearch(payload: object): boolean {
  return Object.entries(payload).every(
    ([key, value]) => value === undefined || SIMPLE_SEARCH_FIELDS.has(key),
  );
}

/** Which transport served the last routed call, for tests and diagnostics. */
export type ServedBy = 'mcp' | 'rest';

/**
 * Routes a search-like call: `rest` always REST; `mcp` always MCP (no fallback); `hybrid` MCP
 * for simple searches once the MCP session is open, REST for the rest, and REST again when MCP
 * fails for any reason other than the caller's abort. Hybrid never makes a call wait for the MCP
 * handshake: a simple search served over REST starts opening the session in the background once
 * it has its answer (and stays on REST for good when the optional MCP SDK is not installed). Both transports
 * resolve to the REST response's shape plus `request_id`.
 */
export class SearchRouter {
  /** Which transport served the most recent call. */
  lastServedBy: ServedBy | undefined;

  constructor(
    private readonly kind: TransportKind,
    private readonly rest: RestTransport,
    private readonly mcp: McpTransport,
  ) {}

  async call<T extends Record<string, unknown>>(
    tool: string,
    route: RouteRef,
    payload: object,
    options: RequestOptions = {},
  ): Promise<T & { request_id?: string | undefined }> {
    let useMcp = this.kind === 'mcp';
    let warmAfter = false;
    if (this.kind === 'hybrid' && isSimpleSearch(payload)) {
      useMcp = this.mcp.ready;
      warmAfter = !useMcp;
    }
    if (useMcp) {
      try {
        const structured = await this.mcp.callTool(
          tool,
          payload as Record<string, unknown>,
          options,
        );
        this.lastServedBy = 'mcp';
        return structured as T & { request_id?: string };
      } catch (error) {
        if (this.kind === 'mcp' || error instanceof APIUserAbortError) throw error;
        // Hybrid: fall through to REST for this call.
      }
    }
    try {
      const { data, requestId } = await this.rest.request<T>(route, { ...options, body: payload });
      this.lastServedBy = 'rest';
      return { ...data, request_id: requestId };
    } finally {
      // After the answer, not before: loading the SDK takes the event loop for a while, and
      // this call must not pay for it.
      if (warmAfter) this.mcp.warm();
    }
  }
}

import {
  CONSISTENCY_TOKEN_HEADER,
  CONSISTENCY_TOKEN_PATTERN,
  consistencyTokenAtLeast,
} from '@mnemo/contract';
import type { Fetch } from './fetch-with-timeout.js';

/**
 * Read-your-writes against a server with read replicas (docs/scaling.md): the returned fetch
 * remembers the newest consistency token a response carried and sends it with every later
 * request, over REST and MCP alike, so a read made after a write sees that write whichever
 * instance and replica serve it. One per client instance: tokens are not shared between clients.
 */
export function withConsistencyToken(fetch: Fetch): Fetch {
  let last: string | undefined;
  return async (url, init) => {
    const response = await fetch(url, last === undefined ? init : withHeader(init, last));
    const token = response.headers.get(CONSISTENCY_TOKEN_HEADER);
    if (
      token !== null &&
      CONSISTENCY_TOKEN_PATTERN.test(token) &&
      (last === undefined || consistencyTokenAtLeast(token, last))
    ) {
      last = token;
    }
    return response;
  };
}

/** The request with the token header added, its headers kept in the form they were given. */
function withHeader(init: RequestInit, token: string): RequestInit {
  const given = init.headers;
  if (given instanceof Headers) {
    const headers = new Headers(given);
    if (!headers.has(CONSISTENCY_TOKEN_HEADER)) headers.set(CONSISTENCY_TOKEN_HEADER, token);
    return { ...init, headers };
  }
  if (Array.isArray(given))
    return { ...init, headers: [...given, [CONSISTENCY_TOKEN_HEADER, token]] };
  return { ...init, headers: { [CONSISTENCY_TOKEN_HEADER]: token, ...given } };
}

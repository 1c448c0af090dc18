import { contract, CSRF_HEADER, DASHBOARD_CSRF_COOKIE } from '@mnemo/contract';
import { initClient, tsRestFetchApi } from '@ts-rest/core';

/** The CSRF token of the current session, from its script-readable cookie (double submit). */
export function csrfToken(): string {
  const prefix = `${DASHBOARD_CSRF_COOKIE}=`;
  const entry = document.cookie.split('; ').find((part) => part.startsWith(prefix));
  return entry ? decodeURIComponent(entry.slice(prefix.length)) : '';
}

/** Paths that answer 401 for a bad token, not for a lost session. */
const SIGN_IN_PATHS = ['/v1/dashboard/bootstrap', '/v1/dashboard/session'];

let onSessionLost: () => void = () => undefined;

/** Called once by the shell: a 401 on any session call means the session ended (expired, signed out elsewhere). */
export function whenSessionLost(listener: () => void): void {
  onSessionLost = listener;
}

/**
 * The console's one API client: the contract through ts-rest's fetch client, on the server's
 * own origin, with the session cookie and the CSRF header on every call (the same routes the
 * SDK uses with an API key). A 401 outside sign-in sends the user back to the sign-in page; a
 * network failure becomes a response with status 0, so every page has one error path.
 */
export const api = initClient(contract, {
  baseUrl: '',
  credentials: 'include',
  throwOnUnknownStatus: false,
  baseHeaders: { [CSRF_HEADER]: () => csrfToken() },
  api: async (args) => {
    try {
      const res = await tsRestFetchApi(args);
      if (res.status === 401 && !SIGN_IN_PATHS.some((path) => args.path.includes(path))) {
        onSessionLost();
      }
      return res;
    } catch {
      return { status: 0, body: undefined, headers: new Headers() };
    }
  },
});

/** What to tell the user for each error code, instead of the API's developer-facing message. */
const PLAIN_WORDS: Record<string, string> = {
  UNAUTHORIZED: 'Your session has ended. Sign in again.',
  FORBIDDEN: 'You do not have access to this in the current workspace.',
  NOT_FOUND: 'Not found: it may have been deleted.',
  RATE_LIMITED: 'Too many requests right now. Wait a few seconds and try again.',
  CAP_EXCEEDED: 'Your plan’s limit for this is reached.',
  TRIAL_EXPIRED: 'This workspace has no plan in force, so it cannot do this until one is active.',
  ENTITLEMENT_DEGRADED: 'Writes are paused while the plan cannot be checked. Reading still works.',
  SERVICE_UNAVAILABLE: 'The server is busy or restarting. Try again in a moment.',
};

/** The error of a failed call, in words a console user can act on. */
export function errorMessage(res: { status: number; body: unknown }): string {
  if (res.status === 0) return 'Cannot reach the server. Check that it is running, then retry.';
  const body = res.body as { error?: { message?: string; code?: string } } | undefined;
  const code = body?.error?.code;
  if (code && PLAIN_WORDS[code]) return PLAIN_WORDS[code];
  // Validation and conflict messages name the field: they are the useful part.
  if (body?.error?.message) return body.error.message;
  return res.status >= 500
    ? 'Something went wrong on the server. Try again; if it persists, check the server log.'
    : `The request failed (HTTP ${res.status}).`;
}

const TOKEN_KEY = 'mnemo.console.token';

/** The identity token, kept for this tab only, so switching workspace can open a new session. */
export const identityToken = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** A failed sign-in in plain words: a bad or stale token is the usual cause, not a server fault. */
function signInFailure(res: { status: number; body: unknown }): string {
  if (res.status === 401) {
    return 'This sign-in link or token is not valid (it may have expired or come from another server). Restart the server for a new link, or paste a fresh token.';
  }
  if (res.status === 403) return 'This account is not a member of that workspace.';
  return errorMessage(res);
}

/** Bootstrap (find or create the user's workspace), then a session on it. Null on success. */
export async function signIn(token: string, workspaceId?: string): Promise<string | null> {
  let target = workspaceId;
  if (!target) {
    const boot = await api.dashboard.bootstrapDashboard({ body: { access_token: token } });
    if (boot.status !== 200) return signInFailure(boot);
    target = boot.body.data.workspace.id;
  }
  const session = await api.dashboard.createDashboardSession({
    body: { access_token: token, workspace_id: target },
  });
  if (session.status !== 200) return signInFailure(session);
  identityToken.set(token);
  return null;
}

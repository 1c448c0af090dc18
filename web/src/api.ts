import { contract, CSRF_HEADER, DASHBOARD_CSRF_COOKIE } from '@mnemo/contract';
import { initClient } from '@ts-rest/core';

/** The CSRF token of the current session, from its script-readable cookie (double submit). */
export function csrfToken(): string {
  const prefix = `${DASHBOARD_CSRF_COOKIE}=`;
  const entry = document.cookie.split('; ').find((part) => part.startsWith(prefix));
  return entry ? decodeURIComponent(entry.slice(prefix.length)) : '';
}

/**
 * The console's one API client: the contract through ts-rest's fetch client, on the server's
 * own origin, with the session cookie and the CSRF header on every call (the same routes the
 * SDK uses with an API key).
 */
export const api = initClient(contract, {
  baseUrl: '',
  credentials: 'include',
  throwOnUnknownStatus: false,
  baseHeaders: { [CSRF_HEADER]: () => csrfToken() },
});

/** The error message of a failed call, in either envelope. */
export function errorMessage(res: { status: number; body: unknown }): string {
  const body = res.body as { error?: { message?: string; code?: string } } | undefined;
  return body?.error?.message
    ? `${body.error.code ?? res.status}: ${body.error.message}`
    : `HTTP ${res.status}`;
}

const TOKEN_KEY = 'mnemo.console.token';

/** The identity token, kept for this tab only, so switching workspace can open a new session. */
export const identityToken = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** Bootstrap (find or create the user's workspace), then a session on it. */
export async function signIn(token: string, workspaceId?: string): Promise<string | null> {
  let target = workspaceId;
  if (!target) {
    const boot = await api.dashboard.bootstrapDashboard({ body: { access_token: token } });
    if (boot.status !== 200) return errorMessage(boot);
    target = boot.body.data.workspace.id;
  }
  const session = await api.dashboard.createDashboardSession({
    body: { access_token: token, workspace_id: target },
  });
  if (session.status !== 200) return errorMessage(session);
  identityToken.set(token);
  return null;
}

import { DASHBOARD_CSRF_COOKIE, DASHBOARD_SESSION_COOKIE } from '@mnemo/contract';
import type { CookieOptions, Request, Response } from 'express';

/** The cookies of a request (no cookie-parser: one header, split once). */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    if (part.slice(0, index).trim() !== name) continue;
    const value = part.slice(index + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Secure whenever the request came over HTTPS (behind a proxy: with MNEMO_TRUST_PROXY). */
function cookieOptions(req: Request, httpOnly: boolean, expires?: Date): CookieOptions {
  return {
    httpOnly,
    sameSite: 'lax',
    secure: req.secure,
    path: '/',
    ...(expires ? { expires } : {}),
  };
}

/**
 * Sets the session cookie (HttpOnly) and the CSRF cookie (readable by the console's script, for
 * the double submit: the header must equal the session's token, which only same-origin script
 * can read from this cookie).
 */
export function setSessionCookies(
  req: Request,
  res: Response,
  session: { token: string; csrfToken: string; expiresAt: Date },
): void {
  res.cookie(DASHBOARD_SESSION_COOKIE, session.token, cookieOptions(req, true, session.expiresAt));
  res.cookie(
    DASHBOARD_CSRF_COOKIE,
    session.csrfToken,
    cookieOptions(req, false, session.expiresAt),
  );
}

export function clearSessionCookies(req: Request, res: Response): void {
  res.clearCookie(DASHBOARD_SESSION_COOKIE, cookieOptions(req, true));
  res.clearCookie(DASHBOARD_CSRF_COOKIE, cookieOptions(req, false));
}

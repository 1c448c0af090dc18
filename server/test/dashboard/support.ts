import { SignJWT, type JWTPayload } from 'jose';
import request, { type Response } from 'supertest';
import { expect } from 'vitest';

export const SECRET = 'dashboard-test-secret-0123456789abcdef';
export const ISSUER = 'https://idp.test';
export const AUDIENCE = 'mnemo-dashboard-test';

/** Dashboard identity settings of these suites: an HS256 secret, issuer and audience. */
export const DASHBOARD_ENV: Record<string, string> = {
  MNEMO_DASHBOARD_JWT_SECRET: SECRET,
  MNEMO_DASHBOARD_ISSUER: ISSUER,
  MNEMO_DASHBOARD_AUDIENCE: AUDIENCE,
};

/** A token as the identity provider would sign it; every part can be overridden. */
export async function signToken(
  sub: string,
  {
    secret = SECRET,
    issuer = ISSUER,
    audience = AUDIENCE,
    expiresIn = '10m',
    claims = {},
  }: {
    secret?: string;
    issuer?: string;
    audience?: string;
    expiresIn?: string | number;
    claims?: JWTPayload;
  } = {},
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}

/** An unsigned token (`alg: none`) with valid-looking claims. */
export function unsignedToken(sub: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({
    sub,
    iss: ISSUER,
    aud: AUDIENCE,
    iat: now,
    exp: now + 600,
  })}.`;
}

/** The `name=value` pairs of a response's Set-Cookie headers. */
export function cookiesOf(res: Response): Record<string, string> {
  const header = res.headers['set-cookie'] as unknown as string[] | undefined;
  const cookies: Record<string, string> = {};
  for (const line of header ?? []) {
    const [pair] = line.split(';');
    const index = pair!.indexOf('=');
    cookies[pair!.slice(0, index)] = pair!.slice(index + 1);
  }
  return cookies;
}

/**
 * Signs `user` in to the console on `app`: the bootstrap of a workspace of its own, then a
 * session for it. Returns the session cookie and the CSRF token its unsafe requests need.
 */
export async function signInToConsole(
  app: Parameters<typeof request>[0],
  user: string,
): Promise<{ cookie: string; csrf: string }> {
  const token = await signToken(user);
  const boot = await request(app).post('/v1/dashboard/bootstrap').send({ access_token: token });
  expect(boot.status, JSON.stringify(boot.body)).toBe(200);
  const session = await request(app)
    .post('/v1/dashboard/session')
    .send({ access_token: token, workspace_id: boot.body.data.workspace.id });
  expect(session.status, JSON.stringify(session.body)).toBe(200);
  return {
    cookie: `svc_dash_session=${cookiesOf(session).svc_dash_session}`,
    csrf: session.body.data.csrf_token as string,
  };
}

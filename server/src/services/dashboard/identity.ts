import { randomBytes } from 'node:crypto';
import {
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
  type JWTVerifyGetKey,
} from 'jose';
import type { DashboardConfig } from '../../config.js';
import type { Database } from '../../db/client.js';
import { getOrCreateSetting } from '../../db/queries/settings.js';
import { InvariantError, ServiceError } from '../../errors.js';

/** Where a generated HS256 secret is kept (beside the API key salt). */
const SECRET_SETTING = 'dashboard_jwt_secret';
/** The subject of tokens in the sign-in link printed at start. */
export const LOCAL_ADMIN_USER = 'local-admin';
/** Asymmetric algorithms an identity provider's JWKS may sign with; never `none` or HS*. */
const JWKS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'EdDSA',
];

/** Longest `sub` (and `email`) kept, in characters: an identity provider's ids are far shorter. */
const MAX_IDENTIFIER_CHARS = 256;
/** C0 and C1 control characters and DEL: never part of an identifier (NUL cannot even be stored). */
const CONTROL_CHARACTER = /\p{Cc}/u;
/** A UTF-16 surrogate without its other half: not well-formed Unicode. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether a claim can serve as an identifier: a non-empty, bounded string of well-formed Unicode
 * without control characters. A lone surrogate is refused rather than stored: the database keeps
 * text as UTF-8, where every lone surrogate becomes the same replacement character, so two
 * different subjects would name one user.
 */
export function isIdentifier(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= MAX_IDENTIFIER_CHARS &&
    !LONE_SURROGATE.test(value) &&
    !CONTROL_CHARACTER.test(value)
  );
}

export interface VerifiedIdentity {
  /** The token's `sub`. */
  userId: string;
}

/**
 * Verifies identity-provider access tokens (spec rule 1) with jose: an external provider's JWKS,
 * or an HS256 secret (configured, or generated once and kept in the server settings). Issuer,
 * audience, expiry and subject are required; `alg: none` and other algorithms are refused.
 */
export class DashboardIdentity {
  private secret: Promise<Uint8Array> | undefined;
  private jwks: JWTVerifyGetKey | undefined;

  constructor(
    private readonly db: Database,
    private readonly config: DashboardConfig,
  ) {
    if (config.jwksUrl) this.jwks = createRemoteJWKSet(new URL(config.jwksUrl));
  }

  /** `local`: the server signs its own sign-in tokens; `jwks`: an external provider does. */
  get mode(): 'jwks' | 'secret' | 'local' {
    if (this.config.jwksUrl) return 'jwks';
    return this.config.jwtSecret ? 'secret' : 'local';
  }

  private hmacKey(): Promise<Uint8Array> {
    this.secret ??= (async () => {
      const value =
        this.config.jwtSecret ??
        (await getOrCreateSetting(this.db, SECRET_SETTING, () =>
          randomBytes(32).toString('base64url'),
        ));
      return new TextEncoder().encode(value);
    })();
    // A failed read is retried on the next call rather than cached.
    this.secret.catch(() => (this.secret = undefined));
    return this.secret;
  }

  async verify(token: string): Promise<VerifiedIdentity> {
    const options = {
      issuer: this.config.issuer,
      audience: this.config.audience,
      requiredClaims: ['exp', 'sub'],
    };
    try {
      const { payload } = this.jwks
        ? await jwtVerify(token, this.jwks, { ...options, algorithms: JWKS_ALGORITHMS })
        : await jwtVerify(token, await this.hmacKey(), { ...options, algorithms: ['HS256'] });
      if (!isIdentifier(payload.sub)) {
        throw new ServiceError('UNAUTHORIZED', 'The access token has no usable subject');
      }
      if (payload.email !== undefined && !isIdentifier(payload.email)) {
        throw new ServiceError('UNAUTHORIZED', 'The access token has an unusable email claim');
      }
      return { userId: payload.sub };
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      if (error instanceof joseErrors.JOSEError) {
        throw new ServiceError('UNAUTHORIZED', `Invalid access token (${error.code})`);
      }
      throw error;
    }
  }

  /**
   * A short-lived token for `sub`, signed with the HS256 secret: the self-hosted way in. Refused
   * when an external identity provider (JWKS) is configured.
   */
  async signToken(sub: string, ttlMs: number): Promise<string> {
    if (this.jwks)
      throw new InvariantError('tokens are issued by the identity provider (JWKS mode)');
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(this.config.issuer)
      .setAudience(this.config.audience)
      .setIssuedAt()
      .setExpirationTime(Math.floor((Date.now() + ttlMs) / 1000))
      .sign(await this.hmacKey());
  }
}

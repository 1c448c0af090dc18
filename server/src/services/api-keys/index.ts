import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database, Writer } from '../../db/client.js';
import {
  findActiveApiKeyByHash,
  insertApiKey,
  touchApiKeyLastUsed,
} from '../../db/queries/api-keys.js';
import { getOrCreateSetting, getSetting } from '../../db/queries/settings.js';
import { localRevocations, type RevocationChannel } from './revocations.js';

export const API_KEY_PREFIX = 'mnemo_';
const SALT_SETTING = 'api_key_salt';
/** Don't write last_used_at on every request: once a minute per key is plenty. */
const TOUCH_INTERVAL_MS = 60_000;
/**
 * A verified key is trusted from memory this long, saving a query per request. A revocation calls
 * {@link ApiKeyService.forget}, which drops the key here and, with Redis, on every other instance
 * (services/api-keys/revocations.ts); an instance that missed that message trusts the key for at most
 * this long (docs/scaling.md).
 */
export const AUTH_CACHE_TTL_MS = 15_000;
const AUTH_CACHE_MAX = 10_000;

export interface AuthContext {
  workspaceId: string;
  apiKeyId: string;
  /** Epoch ms until which the key has the introductory rate limit; absent: none. */
  introductoryUntil?: number;
  /** `admin`: the key may also create workspaces (POST /v1/workspaces). */
  scope: 'tenant' | 'admin';
}

/** How long a key minted by the operator key route keeps the introductory rate (the spec: 48 h). */
export const INTRODUCTORY_PERIOD_MS = 48 * 60 * 60 * 1000;

export interface MintOptions {
  /** Operator-minted keys start on the introductory rate for {@link INTRODUCTORY_PERIOD_MS}. */
  introductory?: boolean;
  /** Default `tenant`; `admin` keys may also create workspaces. */
  scope?: 'tenant' | 'admin';
  /** The transaction to store the key in (bootstrap); default: the service's own database. */
  writer?: Writer;
}

export interface MintedApiKey {
  id: string;
  workspaceId: string;
  name: string;
  /** Shown once; only its salted hash is stored. */
  plaintext: string;
}

/** Mints, stores (as salted HMAC-SHA256 hashes) and verifies API keys. */
export class ApiKeyService {
  private readonly lastTouched = new Map<string, number>();
  private readonly verified = new Map<string, { auth: AuthContext; until: number }>();
  /** Counts revocations heard: a lookup that overlapped one does not cache what it read. */
  private revocationsHeard = 0;
  private revocations: RevocationChannel = localRevocations;

  private constructor(
    private readonly db: Database,
    private readonly salt: string,
    private readonly saltSource: 'config' | 'database',
  ) {}

  /** Loads the salt from configuration, or from the database (made once on first start). */
  static async create(
    db: Database,
    { salt }: { salt?: string | undefined } = {},
  ): Promise<ApiKeyService> {
    if (salt) return new ApiKeyService(db, salt, 'config');
    const stored = await getOrCreateSetting(db, SALT_SETTING, () =>
      randomBytes(32).toString('hex'),
    );
    return new ApiKeyService(db, stored, 'database');
  }

  hash(plaintext: string): string {
    return createHmac('sha256', this.salt).update(plaintext).digest('hex');
  }

  static generate(): string {
    return API_KEY_PREFIX + randomBytes(24).toString('base64url');
  }

  async mint(workspaceId: string, name: string, options: MintOptions = {}): Promise<MintedApiKey> {
    return this.register(workspaceId, name, ApiKeyService.generate(), options);
  }

  /** Stores a key the operator chose (bootstrap); a key already stored is returned as is. */
  async register(
    workspaceId: string,
    name: string,
    plaintext: string,
    { introductory = false, scope = 'tenant', writer = this.db }: MintOptions = {},
  ): Promise<MintedApiKey> {
    const keyHash = this.hash(plaintext);
    const existing = await findActiveApiKeyByHash(writer, keyHash);
    if (existing) {
      return { id: existing.id, workspaceId: existing.workspaceId, name: existing.name, plaintext };
    }
    const row = await insertApiKey(writer, {
      workspaceId,
      name,
      keyHash,
      keyPrefix: plaintext.slice(0, API_KEY_PREFIX.length + 4),
      scope,
      ...(introductory ? { introductoryUntil: new Date(Date.now() + INTRODUCTORY_PERIOD_MS) } : {}),
    });
    return { id: row.id, workspaceId: row.workspaceId, name: row.name, plaintext };
  }

  async authenticate(plaintext: string): Promise<AuthContext | undefined> {
    const keyHash = this.hash(plaintext);
    const cached = this.verified.get(keyHash);
    if (cached && cached.until > Date.now()) return cached.auth;
    const heardBefore = this.revocationsHeard;
    const row = await findActiveApiKeyByHash(this.db, keyHash);
    if (!row) return undefined;
    // The lookup is by hash already; compare again in constant time so no code path branches
    // on a partial match.
    const expected = Buffer.from(row.keyHash, 'hex');
    const actual = Buffer.from(keyHash, 'hex');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    this.touch(row.id);
    const auth: AuthContext = {
      workspaceId: row.workspaceId,
      apiKeyId: row.id,
      scope: row.scope,
      ...(row.introductoryUntil ? { introductoryUntil: row.introductoryUntil.getTime() } : {}),
    };
    // A revocation heard while the row was read may have come after the read: don't keep it.
    if (heardBefore !== this.revocationsHeard) return auth;
    if (this.verified.size >= AUTH_CACHE_MAX) this.verified.clear();
    this.verified.set(keyHash, { auth, until: Date.now() + AUTH_CACHE_TTL_MS });
    return auth;
  }

  /**
   * Revocations from now on reach every instance through `channel` (Redis pub/sub): this one
   * announces the keys it forgets, and forgets those the others announce.
   */
  async shareRevocations(channel: RevocationChannel): Promise<void> {
    this.revocations = channel;
    await channel.subscribe(
      (apiKeyId) => this.forgetHere(apiKeyId),
      () => this.forgetAllHere(),
    );
  }

  /**
   * Drops a key from the verified cache after revoking it, here and on every other instance. The
   * revocation is committed already: a failed announcement only leaves the others on the cache
   * bound, so it is not an error for the caller.
   */
  forget(apiKeyId: string): Promise<void> {
    this.forgetHere(apiKeyId);
    return this.revocations.publish(apiKeyId).catch(() => undefined);
  }

  private forgetHere(apiKeyId: string): void {
    this.revocationsHeard += 1;
    for (const [hash, entry] of this.verified) {
      if (entry.auth.apiKeyId === apiKeyId) this.verified.delete(hash);
    }
  }

  /** Revocations may have been missed: no verified key is trusted from memory any more. */
  private forgetAllHere(): void {
    this.revocationsHeard += 1;
    this.verified.clear();
  }

  /** Readiness: the salt the keys are hashed with can still be read. */
  async checkSalt(): Promise<boolean> {
    if (this.saltSource === 'config') return true;
    return (await getSetting(this.db, SALT_SETTING)) === this.salt;
  }

  private touch(id: string): void {
    const now = Date.now();
    if (now - (this.lastTouched.get(id) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, now);
    // Bookkeeping only: a failure here must not fail the request.
    touchApiKeyLastUsed(this.db, id).catch(() => undefined);
  }
}

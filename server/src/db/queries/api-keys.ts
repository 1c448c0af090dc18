import type { Reader, Writer } from '../client.js';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { type ApiKey, apiKeys } from '../schema/index.js';
import { lostAnswer } from '../faults.js';

export async function insertApiKey(
  db: Writer,
  input: {
    workspaceId: string;
    name: string;
    keyPrefix: string;
    keyHash: string;
    introductoryUntil?: Date;
    scope?: 'tenant' | 'admin';
  },
): Promise<ApiKey> {
  const [row] = await db.insert(apiKeys).values(input).returning();
  if (!row) throw lostAnswer('insert into api_keys');
  return row;
}

/** The key with this hash unless it was revoked. */
export async function findActiveApiKeyByHash(
  db: Reader,
  keyHash: string,
): Promise<ApiKey | undefined> {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row;
}

export async function touchApiKeyLastUsed(db: Writer, id: string): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: sql`now()` })
    .where(eq(apiKeys.id, id));
}

/** Revokes the key, whatever its workspace (the admin route); a second revoke keeps the first time. */
export async function revokeApiKeyById(db: Writer, id: string): Promise<ApiKey | undefined> {
  const [revoked] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning();
  if (revoked) return revoked;
  const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id)).limit(1);
  return row;
}

import type { Reader, Writer } from '../client.js';
import { eq } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import { serverSettings } from '../schema/index.js';

export async function getSetting(db: Reader, key: string): Promise<string | undefined> {
  const [row] = await db
    .select({ value: serverSettings.value })
    .from(serverSettings)
    .where(eq(serverSettings.key, key))
    .limit(1);
  return row?.value;
}

/**
 * Returns the stored value, creating it with `makeValue()` the first time. Insert-then-read
 * (ON CONFLICT DO NOTHING) so that processes starting together all end up with the first
 * writer's value; a losing candidate value is discarded.
 */
export async function getOrCreateSetting(
  db: Writer,
  key: string,
  makeValue: () => string,
): Promise<string> {
  const existing = await getSetting(db, key);
  if (existing !== undefined) return existing;
  await db
    .insert(serverSettings)
    .values({ key, value: makeValue() })
    .onConflictDoNothing({ target: serverSettings.key });
  const stored = await getSetting(db, key);
  if (stored === undefined)
    throw new DatabaseError(`server setting ${key} vanished right after being created`);
  return stored;
}

import { lostAnswer } from '../faults.js';
import type { Reader, Writer } from '../client.js';
import { eq, sql } from 'drizzle-orm';
import { workspaceConnectorSettings } from '../schema/index.js';

export interface StoredConnectorSettings {
  settings: unknown;
  updatedAt: Date;
}

export async function getConnectorSettings(
  db: Reader,
  workspaceId: string,
): Promise<StoredConnectorSettings | undefined> {
  const [row] = await db
    .select({
      settings: workspaceConnectorSettings.settings,
      updatedAt: workspaceConnectorSettings.updatedAt,
    })
    .from(workspaceConnectorSettings)
    .where(eq(workspaceConnectorSettings.workspaceId, workspaceId))
    .limit(1);
  return row;
}

/**
 * Reads the stored settings under a row lock, lets `merge` compute the new ones and writes them,
 * in one transaction: two PATCHes of different fields both land.
 */
export async function updateConnectorSettings(
  db: Writer,
  workspaceId: string,
  merge: (current: unknown) => unknown,
): Promise<StoredConnectorSettings> {
  return db.transaction(async (tx) => {
    // Make sure a row exists to lock, so the first two PATCHes also serialize.
    await tx
      .insert(workspaceConnectorSettings)
      .values({ workspaceId, settings: sql`'null'::jsonb` })
      .onConflictDoNothing();
    const [current] = await tx
      .select({ settings: workspaceConnectorSettings.settings })
      .from(workspaceConnectorSettings)
      .where(eq(workspaceConnectorSettings.workspaceId, workspaceId))
      .for('update');
    const settings = merge(current?.settings ?? null);
    const [row] = await tx
      .update(workspaceConnectorSettings)
      .set({ settings, updatedAt: sql`now()` })
      .where(eq(workspaceConnectorSettings.workspaceId, workspaceId))
      .returning({
        settings: workspaceConnectorSettings.settings,
        updatedAt: workspaceConnectorSettings.updatedAt,
      });
    if (!row) throw lostAnswer('connector settings upsert');
    return row;
  });
}

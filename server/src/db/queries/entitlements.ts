import type { Reader, Writer } from '../client.js';
import { and, eq } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import { lostAnswer } from '../faults.js';
import {
  type NewWorkspaceEntitlement,
  type WorkspaceEntitlement,
  workspaceEntitlements,
} from '../schema/index.js';

export async function getEntitlement(
  db: Reader,
  workspaceId: string,
): Promise<WorkspaceEntitlement | undefined> {
  const [row] = await db
    .select()
    .from(workspaceEntitlements)
    .where(eq(workspaceEntitlements.workspaceId, workspaceId))
    .limit(1);
  return row;
}

/**
 * Gives the workspace an `internal_grant` unless it already has an entitlement, and returns the
 * one it has. Insert-then-read (ON CONFLICT DO NOTHING), so instances granting at once, or a
 * billing entitlement written meanwhile, all end up with the same row.
 */
export async function grantInternalEntitlement(
  db: Writer,
  grant: { workspaceId: string; plan: string; periodStart: Date; periodEnd: Date },
): Promise<WorkspaceEntitlement> {
  await db
    .insert(workspaceEntitlements)
    .values({ ...grant, status: 'active', entitlementSource: 'internal_grant' })
    .onConflictDoNothing({ target: workspaceEntitlements.workspaceId });
  const row = await getEntitlement(db, grant.workspaceId);
  if (!row) throw new DatabaseError('workspace entitlement vanished right after being granted');
  return row;
}

/** Writes the workspace's entitlement (billing, an operator), replacing the one it had. */
export async function upsertEntitlement(
  db: Writer,
  entitlement: Omit<NewWorkspaceEntitlement, 'createdAt' | 'updatedAt'>,
): Promise<WorkspaceEntitlement> {
  const { workspaceId: _, ...changes } = entitlement;
  const [row] = await db
    .insert(workspaceEntitlements)
    .values(entitlement)
    .onConflictDoUpdate({
      target: workspaceEntitlements.workspaceId,
      set: { ...changes, updatedAt: new Date() },
    })
    .returning();
  if (!row) throw lostAnswer('upsert into workspace_entitlements');
  return row;
}

/**
 * Moves an entitlement on to the period that contains now (internal grants renew by
 * themselves). Only when its period is still the one read, so that a concurrent roll or a
 * billing update is not overwritten; returns whether it moved.
 */
export async function rollEntitlementPeriod(
  db: Writer,
  roll: { workspaceId: string; fromPeriodStart: Date; periodStart: Date; periodEnd: Date },
): Promise<boolean> {
  const rows = await db
    .update(workspaceEntitlements)
    .set({ periodStart: roll.periodStart, periodEnd: roll.periodEnd, updatedAt: new Date() })
    .where(
      and(
        eq(workspaceEntitlements.workspaceId, roll.workspaceId),
        eq(workspaceEntitlements.periodStart, roll.fromPeriodStart),
      ),
    )
    .returning({ workspaceId: workspaceEntitlements.workspaceId });
  return rows.length > 0;
}

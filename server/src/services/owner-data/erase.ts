import { createHash } from 'node:crypto';
import type { ErasureReceipt, OwnerType } from '@mnemo/contract';
import type { Writer } from '../../db/client.js';
import { toEventRow } from '../../db/queries/events.js';
import { eraseOwnerRows, latestErasure, type ErasedCounts } from '../../db/queries/owner-data.js';
import { dropOwnerIndexes } from '../../db/queries/owner-indexes.js';
import { domainEvents } from '../../db/schema/index.js';
import { DatabaseError } from '../../errors.js';
import { fencedCommit } from '../deadline-fence.js';
import { recordStorageFreed } from '../usage/index.js';

/**
 * The owner as the receipt and the `erased` event name it: a hash bound to the workspace, so the
 * outbox keeps no owner id, yet whoever knows the id can find its receipt.
 */
export function ownerHash(workspaceId: string, ownerType: string, ownerId: string): string {
  return createHash('sha256').update(`${workspaceId}\n${ownerType}\n${ownerId}`).digest('hex');
}

/**
 * Erases an owner in one transaction (see `eraseOwnerRows` for what goes) and leaves one
 * `erased` event as the receipt: counts per table and the owner hash, no content. Idempotent:
 * when nothing is left to erase and an earlier receipt exists, that receipt is returned again
 * (`replayed`).
 */
export async function eraseOwner(
  db: Writer,
  workspaceId: string,
  owner: { ownerId: string; ownerType: OwnerType },
): Promise<ErasureReceipt> {
  const hash = ownerHash(workspaceId, owner.ownerType, owner.ownerId);
  const outcome = await fencedCommit(() =>
    db.transaction(async (tx) => {
      const { counts, bytes } = await eraseOwnerRows(tx, workspaceId, owner);
      const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
      if (total === 0) {
        const earlier = await latestErasure(tx, workspaceId, hash);
        if (earlier) {
          const counts = earlier.details.counts as ErasedCounts;
          return { event: earlier, counts, bytes, replayed: true };
        }
      }
      // Written like every outbox event (toEventRow), returned for the receipt's id and time.
      const [event] = await tx
        .insert(domainEvents)
        .values(
          toEventRow({
            kind: 'erased',
            workspaceId,
            memoryId: null,
            rule: 'request',
            details: { owner_hash: hash, owner_type: owner.ownerType, counts },
          }),
        )
        .returning();
      if (!event) throw new DatabaseError('the erasure receipt was not written');
      return { event, counts, bytes, replayed: false };
    }),
  );
  // What the owner stored no longer counts against the plan's storage.
  await recordStorageFreed(db, workspaceId, outcome.bytes);
  // An index of the owner's own names the owner in its predicate; the hygiene job drops it too.
  if (!outcome.replayed)
    await dropOwnerIndexes(db, { workspaceId, ...owner }).catch(() => undefined);
  return {
    receipt_id: outcome.event.id,
    owner_id: owner.ownerId,
    owner_type: owner.ownerType,
    erased_at: outcome.event.createdAt.toISOString(),
    counts: outcome.counts,
    replayed: outcome.replayed,
  };
}

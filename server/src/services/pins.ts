import {
  MAX_PINS_PER_OWNER,
  type GetPinsQuery,
  type OwnerType,
  type PinsResponse,
  type UpdatePinsPayload,
} from '@mnemo/contract';
import type { Database, Reader } from '../db/client.js';
import { memoryHeads } from '../db/queries/links.js';
import {
  deletePins,
  insertPins,
  lockOwnerPins,
  pinsOf,
  type PinOwner,
} from '../db/queries/pins.js';
import { ServiceError } from '../errors.js';

/** An owner id without a type is a user's, as in writes and searches. */
const ownerOf = (
  workspaceId: string,
  fields: { owner_id: string; owner_type?: OwnerType | undefined },
): PinOwner & { ownerType: OwnerType } => ({
  workspaceId,
  ownerId: fields.owner_id,
  ownerType: fields.owner_type ?? 'user',
});

async function pinsResponse(
  db: Reader,
  owner: PinOwner & { ownerType: OwnerType },
): Promise<PinsResponse> {
  const pins = await pinsOf(db, owner);
  return {
    owner_id: owner.ownerId,
    owner_type: owner.ownerType,
    pins: pins.map((pin) => ({
      memory_id: pin.memoryId,
      text: pin.text,
      lifecycle_state: pin.lifecycleState,
      pinned_at: pin.pinnedAt.toISOString(),
    })),
    max_pins: MAX_PINS_PER_OWNER,
  };
}

/**
 * PATCH /v1/profile/pins: unpins, then pins, in one transaction, and returns the owner's pins.
 * A pinned memory must be a live memory of that owner in the caller's workspace (any other id is
 * 404, and nothing changes). Pinning a pinned memory or unpinning one that is not pinned changes
 * nothing. An owner holds at most MAX_PINS_PER_OWNER pins: more is 409 `CONFLICT`.
 */
export async function updatePins(
  db: Database,
  workspaceId: string,
  payload: UpdatePinsPayload,
): Promise<PinsResponse> {
  const owner = ownerOf(workspaceId, payload);
  const pin = [...new Set(payload.pin ?? [])];
  const unpin = [...new Set(payload.unpin ?? [])];
  return db.transaction(async (tx) => {
    await lockOwnerPins(tx, owner);
    // Locked: a memory cannot be archived or deleted between this check and its pin.
    const heads = await memoryHeads(tx, workspaceId, pin, { lock: true });
    const usable = new Set(
      heads
        .filter(
          (head) =>
            head.ownerId === owner.ownerId &&
            head.ownerType === owner.ownerType &&
            head.lifecycleState === 'active',
        )
        .map((head) => head.id),
    );
    const missing = pin.filter((id) => !usable.has(id));
    if (missing.length > 0) {
      throw new ServiceError(
        'NOT_FOUND',
        `No live memory of ${owner.ownerType} ${owner.ownerId} with id ${missing.join(', ')}`,
        { pin: missing.map((id) => `${id}: not a live memory of this owner`) },
      );
    }
    await deletePins(tx, owner, unpin);
    await insertPins(tx, owner, pin);
    const response = await pinsResponse(tx, owner);
    if (response.pins.length > MAX_PINS_PER_OWNER) {
      // Thrown inside the transaction: the unpins and pins above roll back with it.
      throw new ServiceError(
        'CONFLICT',
        `An owner holds at most ${MAX_PINS_PER_OWNER} pins; this update would leave ${response.pins.length}`,
        { pin: [`at most ${MAX_PINS_PER_OWNER} pins per owner; unpin some first`] },
      );
    }
    return response;
  });
}

/** GET /v1/profile/pins: the owner's pins, in pin order. */
export async function getPins(
  db: Reader,
  workspaceId: string,
  query: GetPinsQuery,
): Promise<PinsResponse> {
  return pinsResponse(db, ownerOf(workspaceId, query));
}

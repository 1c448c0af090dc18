import { z } from 'zod';
import { boundedText, OwnerType } from './common.js';
import { INPUT_BOUNDS } from './limits.js';

/** Pins one owner may hold: each pinned memory takes context budget before any ranked one. */
export const MAX_PINS_PER_OWNER = 50;

/** An owner id: at most 256 characters, like the owner ids of writes and searches. */
const OwnerId = boundedText(INPUT_BOUNDS.ownerId);
const MemoryIds = z.array(z.string().uuid()).max(MAX_PINS_PER_OWNER);

export const UpdatePinsPayload = z
  .object({
    owner_id: OwnerId,
    /** Default `user`. */
    owner_type: OwnerType.optional(),
    /** Live memories of this owner to pin (already pinned ones are left as they are). */
    pin: MemoryIds.optional(),
    /** Memories to unpin (ones not pinned are ignored). */
    unpin: MemoryIds.optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if ((value.pin?.length ?? 0) + (value.unpin?.length ?? 0) === 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['pin'],
        message: 'give memory ids to pin or unpin',
      });
    }
    const pin = new Set(value.pin ?? []);
    const both = (value.unpin ?? []).filter((id) => pin.has(id));
    if (both.length > 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['unpin'],
        message: `also in pin: ${both.join(', ')}`,
      });
    }
  });
export type UpdatePinsPayload = z.infer<typeof UpdatePinsPayload>;

export const GetPinsQuery = z
  .object({ owner_id: OwnerId, owner_type: OwnerType.optional() })
  .strict();
export type GetPinsQuery = z.infer<typeof GetPinsQuery>;

export const Pin = z.object({
  memory_id: z.string().uuid(),
  text: z.string(),
  /** Only `active` memories surface in context; a pin of a replaced or archived one stays listed. */
  lifecycle_state: z.string(),
  pinned_at: z.string(),
});
export type Pin = z.infer<typeof Pin>;

export const PinsResponse = z.object({
  owner_id: z.string(),
  owner_type: OwnerType,
  /** In pin order (oldest first), the order context shows them in. */
  pins: z.array(Pin),
  max_pins: z.number().int(),
});
export type PinsResponse = z.infer<typeof PinsResponse>;

import { z } from 'zod';

/**
 * A link's relation: a lower-case slug (`related`, `supports`, `contradicts`, `part_of`, ...),
 * free to name but bounded so that it stays a label, not a payload.
 */
export const LINK_RELATION_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;
/** The relation of a link created without one. */
export const DEFAULT_LINK_RELATION = 'related';

export const LinkRelation = z
  .string()
  .regex(
    LINK_RELATION_PATTERN,
    'must be a lower-case slug: a-z first, then a-z, 0-9 or _, at most 40',
  )
  .describe('Lower-case slug, 1 to 40 characters: a-z first, then a-z, 0-9 or _ (e.g. related).');

export const CreateLinkPayload = z
  .object({
    /** The other end of the edge: a live memory of the same owner in the same workspace. */
    target_id: z.string().uuid(),
    /** Default `related`. */
    relation: LinkRelation.optional(),
  })
  .strict();
export type CreateLinkPayload = z.infer<typeof CreateLinkPayload>;

export const MemoryLink = z.object({
  id: z.string().uuid(),
  source_id: z.string().uuid(),
  target_id: z.string().uuid(),
  relation: z.string(),
  created_at: z.string(),
});
export type MemoryLink = z.infer<typeof MemoryLink>;

export const CreateLinkResponse = z.object({
  link: MemoryLink,
  /** False when the same edge (source, target, relation) already existed: it is returned as is. */
  created: z.boolean(),
});
export type CreateLinkResponse = z.infer<typeof CreateLinkResponse>;

/**
 * Which edges from the memory in the path to delete: those to `target_id` with `relation`, or
 * with any relation when it is omitted.
 */
export const DeleteLinkQuery = z
  .object({
    target_id: z.string().uuid(),
    relation: LinkRelation.optional(),
  })
  .strict();
export type DeleteLinkQuery = z.infer<typeof DeleteLinkQuery>;

export const DeleteLinkResponse = z.object({
  deleted: z.array(MemoryLink),
});
export type DeleteLinkResponse = z.infer<typeof DeleteLinkResponse>;

export const ListLinksResponse = z.object({
  /** Edges with the memory at either end, oldest first. */
  results: z.array(MemoryLink),
});
export type ListLinksResponse = z.infer<typeof ListLinksResponse>;

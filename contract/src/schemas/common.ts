import { z } from 'zod';
import { ERROR_CODES } from '../errors.js';

/** The single error shape of every REST route. */
export const ErrorBody = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.array(z.string())).optional(),
});

export const ErrorEnvelope = z.object({
  error: ErrorBody,
  request_id: z.string(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/**
 * A string PostgreSQL can store: text and jsonb refuse the NUL character, so it is a 400 here
 * rather than a failed insert later.
 */
export const PgString = z.string().refine((value) => !value.includes('\u0000'), {
  message: 'must not contain the NUL character (\\u0000)',
});

/** Metadata values are flat scalars so that they can be filtered on. */
export const MetadataValue = z.union([PgString, z.number(), z.boolean(), z.null()]);
export const Metadata = z.record(PgString, MetadataValue);
export type Metadata = z.infer<typeof Metadata>;

export const OWNER_TYPES = ['user', 'team', 'app'] as const;
export const OwnerType = z.enum(OWNER_TYPES);
export type OwnerType = z.infer<typeof OwnerType>;

export const MEMORY_TYPES = [
  'fact',
  'preference',
  'event',
  'note',
  'task',
  'correction',
  'pin',
] as const;
export const MemoryType = z.enum(MEMORY_TYPES);
export type MemoryType = z.infer<typeof MemoryType>;

/** An ISO 8601 date or timestamp (`2026-01-31` or `2026-01-31T09:00:00Z`). */
export const IsoTimestamp = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/,
    'must be an ISO 8601 date or timestamp',
  )
  .refine((value) => !Number.isNaN(Date.parse(value)), 'must be a valid date');

const ownerId = PgString.pipe(z.string().min(1));

/**
 * Owner identity: `userId`, `user_id`, `owner_id` and `entity_id` are aliases of one id;
 * `owner_type` and `entity_type` are aliases of one type. All optional here; the server refuses
 * aliases that disagree (see {@link checkOwnerAliases}).
 */
export const OwnerFields = z.object({
  userId: ownerId.optional(),
  user_id: ownerId.optional(),
  owner_id: ownerId.optional(),
  entity_id: ownerId.optional(),
  owner_type: OwnerType.optional(),
  entity_type: OwnerType.optional(),
});
export type OwnerFields = z.infer<typeof OwnerFields>;

export const OWNER_ID_ALIASES = ['userId', 'user_id', 'owner_id', 'entity_id'] as const;
export const OWNER_TYPE_ALIASES = ['owner_type', 'entity_type'] as const;

/** Adds an issue on each alias that disagrees with the first one given. */
export function checkOwnerAliases(
  value: Partial<
    Record<(typeof OWNER_ID_ALIASES)[number] | (typeof OWNER_TYPE_ALIASES)[number], string>
  >,
  ctx: z.RefinementCtx,
): void {
  for (const aliases of [OWNER_ID_ALIASES, OWNER_TYPE_ALIASES]) {
    const given = aliases.filter((name) => value[name] !== undefined);
    const first = given[0];
    if (first === undefined) continue;
    for (const name of given.slice(1)) {
      if (value[name] !== value[first]) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [name],
          message: `disagrees with ${first}: ${given.join(', ')} are aliases and must be equal`,
        });
      }
    }
  }
}

/** Memories live in an owner's space, optionally narrowed by these three labels. */
export const ScopeFields = z.object({
  scope: PgString.optional(),
  namespace: PgString.optional(),
  containerTag: PgString.optional(),
});

export const PageFields = z.object({
  page: z.number().int().min(1),
  total: z.number().int().min(0),
  has_more: z.boolean(),
  page_size: z.number().int().min(1).optional(),
});

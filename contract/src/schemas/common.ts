import { z } from 'zod';
import { ERROR_CODES } from '../errors.js';
import { DATE_WINDOW, INPUT_BOUNDS, type Bounds } from './limits.js';
import { TEXT_RULE_DESCRIPTION, unstorableTextReason } from './text.js';

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
 * A string PostgreSQL can store (see `text.ts`): well-formed text without NUL, so it is a 400
 * here rather than a failed insert, or a silently altered value, later.
 */
export const PgString = z.string().superRefine(textRule).describe(TEXT_RULE_DESCRIPTION);

function textRule(value: string, ctx: z.RefinementCtx): void {
  const message = unstorableTextReason(value);
  if (message) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
}

/**
 * A stored string of `min..max` characters under the text rule. A refinement, not a pipe, so
 * that the OpenAPI document shows the bounds (`minLength`, `maxLength`) and the rule.
 */
export function boundedText({ min, max }: Bounds) {
  return z.string().min(min).max(max).superRefine(textRule).describe(TEXT_RULE_DESCRIPTION);
}

/** Metadata values are flat scalars so that they can be filtered on. */
export const MetadataValue = z.union([PgString, z.number(), z.boolean(), z.null()]);
export const Metadata = z.record(boundedText(INPUT_BOUNDS.metadataKey), MetadataValue);
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

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-](\d{2}):?(\d{2}))?)?$/;

/** Why an ISO-looking string is not a real instant in the date window, if it is not. */
function timestampIssue(value: string): string | undefined {
  const match = ISO_TIMESTAMP.exec(value);
  if (!match) return 'must be an ISO 8601 date or timestamp';
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1, 7).map(Number);
  const [offsetHours = 0, offsetMinutes = 0] = match.slice(8, 10).map(Number);
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day);
  const realDay =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month! - 1 &&
    date.getUTCDate() === day;
  if (
    !realDay ||
    hour! > 23 ||
    minute! > 59 ||
    second! > 59 ||
    offsetHours > 15 ||
    offsetMinutes > 59
  ) {
    return 'must be a valid date';
  }
  const instant = Date.parse(value);
  if (Number.isNaN(instant)) return 'must be a valid date';
  if (instant < Date.parse(DATE_WINDOW.min) || instant > Date.parse(DATE_WINDOW.max)) {
    return `must be between ${DATE_WINDOW.min} and ${DATE_WINDOW.max}`;
  }
  return undefined;
}

/**
 * An ISO 8601 date or timestamp (`2026-01-31` or `2026-01-31T09:00:00Z`): a real calendar day
 * and time, within {@link DATE_WINDOW} (years 1 to 9999 in UTC), so the database can store and
 * compare it. Every date field of the contract uses this schema.
 */
export const IsoTimestamp = z
  .string()
  .superRefine((value, ctx) => {
    const message = timestampIssue(value);
    if (message) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
  })
  .describe(
    `ISO 8601 date or timestamp (e.g. 2026-01-31 or 2026-01-31T09:00:00Z) between ${DATE_WINDOW.min} and ${DATE_WINDOW.max}.`,
  );

/** The names a request body may give the owner id under: aliases of one id. */
export const OWNER_ID_ALIASES = ['userId', 'user_id', 'owner_id', 'entity_id'] as const;
/** The names a request body may give the owner type under: aliases of one type. */
export const OWNER_TYPE_ALIASES = ['owner_type', 'entity_type'] as const;
export type OwnerIdAlias = (typeof OWNER_ID_ALIASES)[number];
export type OwnerTypeAlias = (typeof OWNER_TYPE_ALIASES)[number];

/**
 * The owner names the client library accepts, in the order it reads them (the first one given
 * wins, and every other one given must equal it): its own `ownerId`, the legacy `userId` and
 * `entityId`, then the wire aliases. Every wire alias is among them.
 */
export const CLIENT_OWNER_ID_ALIASES = [
  'ownerId',
  'userId',
  'entityId',
  'owner_id',
  'user_id',
  'entity_id',
] as const;
/** As {@link CLIENT_OWNER_ID_ALIASES}, for the owner type: `ownerType`, legacy `entityType`, wire aliases. */
export const CLIENT_OWNER_TYPE_ALIASES = [
  'ownerType',
  'entityType',
  'owner_type',
  'entity_type',
] as const;

/** Legacy owner types the client library still accepts, and the type each one means. */
export const LEGACY_OWNER_TYPES = { agent: 'app' } as const satisfies Record<string, OwnerType>;
export type LegacyOwnerType = keyof typeof LEGACY_OWNER_TYPES;
/** The owner types the client library accepts: the contract's, then the legacy ones. */
export const CLIENT_OWNER_TYPES = [...OWNER_TYPES, 'agent'] as const satisfies ReadonlyArray<
  OwnerType | LegacyOwnerType
>;

const ownerId = boundedText(INPUT_BOUNDS.ownerId);

/**
 * Owner identity: `userId`, `user_id`, `owner_id` and `entity_id` are aliases of one id;
 * `owner_type` and `entity_type` are aliases of one type. All optional here; the server refuses
 * aliases that disagree (see {@link checkOwnerAliases}).
 */
export const OwnerFields = z.object({
  // `satisfies` holds these fields to exactly the alias lists above.
  ...({
    userId: ownerId.optional(),
    user_id: ownerId.optional(),
    owner_id: ownerId.optional(),
    entity_id: ownerId.optional(),
  } satisfies Record<OwnerIdAlias, z.ZodTypeAny>),
  ...({
    owner_type: OwnerType.optional(),
    entity_type: OwnerType.optional(),
  } satisfies Record<OwnerTypeAlias, z.ZodTypeAny>),
});
export type OwnerFields = z.infer<typeof OwnerFields>;

/** Adds an issue on each alias that disagrees with the first one given. */
export function checkOwnerAliases(
  value: Partial<Record<OwnerIdAlias | OwnerTypeAlias, string>>,
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
  scope: boundedText(INPUT_BOUNDS.label).optional(),
  namespace: boundedText(INPUT_BOUNDS.label).optional(),
  containerTag: boundedText(INPUT_BOUNDS.label).optional(),
});

/** A page number: 1.., bounded so that the row offset stays small (see `INPUT_BOUNDS.page`). */
export const PageNumber = z.number().int().min(INPUT_BOUNDS.page.min).max(INPUT_BOUNDS.page.max);

export const PageFields = z.object({
  page: z.number().int().min(1),
  total: z.number().int().min(0),
  has_more: z.boolean(),
  page_size: z.number().int().min(1).optional(),
});

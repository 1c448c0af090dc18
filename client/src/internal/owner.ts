import {
  CLIENT_OWNER_ID_ALIASES,
  CLIENT_OWNER_TYPE_ALIASES,
  LEGACY_OWNER_TYPES,
  type LegacyOwnerType,
  type OwnerType,
} from '@mnemo/contract';
import { InvalidOwnerIdError } from '../core/errors.js';
import type { OwnerParams, OwnerTypeInput } from '../core/types.js';

const OWNER_KEYS: ReadonlySet<string> = new Set<string>([
  ...CLIENT_OWNER_ID_ALIASES,
  ...CLIENT_OWNER_TYPE_ALIASES,
]);

/** The owner as the wire takes it: one `owner_id` and one `owner_type`, both optional. */
export interface WireOwner {
  owner_id?: string;
  owner_type?: OwnerType;
}

function normaliseType(value: OwnerTypeInput): OwnerType {
  return Object.hasOwn(LEGACY_OWNER_TYPES, value)
    ? LEGACY_OWNER_TYPES[value as LegacyOwnerType]
    : (value as OwnerType);
}

/**
 * Folds every owner alias into `owner_id` / `owner_type`, and throws `InvalidOwnerIdError` when
 * two given ids (or two given types, after `agent` → `app`) differ. Runs before any request.
 */
export function normaliseOwner(params: OwnerParams): WireOwner {
  const ids = CLIENT_OWNER_ID_ALIASES.flatMap((key) =>
    params[key] === undefined ? [] : [[key, params[key]] as const],
  );
  const first = ids[0];
  for (const [key, value] of ids.slice(1)) {
    if (first && value !== first[1]) {
      throw new InvalidOwnerIdError(
        `Owner ids disagree: ${first[0]} is "${first[1]}" but ${key} is "${value}"; give one id, or equal ids`,
      );
    }
  }
  const types = CLIENT_OWNER_TYPE_ALIASES.flatMap((key) => {
    const value = params[key];
    return value === undefined ? [] : [[key, normaliseType(value)] as const];
  });
  const firstType = types[0];
  for (const [key, value] of types.slice(1)) {
    if (firstType && value !== firstType[1]) {
      throw new InvalidOwnerIdError(
        `Owner types disagree: ${firstType[0]} is "${firstType[1]}" but ${key} is "${value}"`,
      );
    }
  }
  const owner: WireOwner = {};
  if (first) owner.owner_id = first[1];
  if (firstType) owner.owner_type = firstType[1];
  return owner;
}

/** `params` without its owner aliases, with the normalised owner in their place. */
export function withWireOwner<T extends OwnerParams>(
  params: T,
): Omit<T, keyof OwnerParams> & WireOwner {
  const owner = normaliseOwner(params);
  const rest = Object.fromEntries(
    Object.entries(params).filter(([key, value]) => !OWNER_KEYS.has(key) && value !== undefined),
  ) as Omit<T, keyof OwnerParams>;
  return { ...rest, ...owner };
}

import type { OwnerType } from '@mnemo/contract';
import { InvalidOwnerIdError } from '../core/errors.js';
import type { OwnerParams, OwnerTypeInput } from '../core/types.js';

const ID_KEYS = ['ownerId', 'userId', 'entityId', 'owner_id', 'user_id', 'entity_id'] as const;
const TYPE_KEYS = ['ownerType', 'entityType', 'owner_type', 'entity_type'] as const;
const OWNER_KEYS: ReadonlySet<string> = new Set<string>([...ID_KEYS, ...TYPE_KEYS]);

/** The owner as the wire takes it: one `owner_id` and one `owner_type`, both optional. */
export interface WireOwner {
  owner_id?: string;
  owner_type?: OwnerType;
}

function normaliseType(value: OwnerTypeInput): OwnerType {
  return value === 'agent' ? 'app' : value;
}

/**
 * Folds every owner alias into `owner_id` / `owner_type`, and throws `InvalidOwnerIdError` when
 * two given ids (or two given types, after `agent` → `app`) differ. Runs before any request.
 */
export function normaliseOwner(params: OwnerParams): WireOwner {
  const ids = ID_KEYS.flatMap((key) =>
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
  const types = TYPE_KEYS.flatMap((key) => {
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

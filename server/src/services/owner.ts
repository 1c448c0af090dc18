import { OWNER_ID_ALIASES, OWNER_TYPE_ALIASES, type OwnerType } from '@mnemo/contract';

export interface OwnerFilter {
  ownerId?: string;
  ownerType?: OwnerType;
}

type OwnerAliasFields = Partial<Record<(typeof OWNER_ID_ALIASES)[number], string>> &
  Partial<Record<(typeof OWNER_TYPE_ALIASES)[number], OwnerType>>;

/** The owner named by whichever alias was given (the contract already refused disagreeing ones). */
export function ownerFromAliases(fields: OwnerAliasFields): OwnerFilter {
  const ownerId = OWNER_ID_ALIASES.map((name) => fields[name]).find((value) => value !== undefined);
  const ownerType = OWNER_TYPE_ALIASES.map((name) => fields[name]).find(
    (value) => value !== undefined,
  );
  return { ...(ownerId ? { ownerId } : {}), ...(ownerType ? { ownerType } : {}) };
}

/** Owner of memories written or searched without any owner id: the workspace's app itself. */
export const DEFAULT_OWNER = { ownerId: 'default', ownerType: 'app' } as const;

/** The owner a request acts for: an id without a type is a user; no id is the default owner. */
export function resolveOwner(fields: OwnerAliasFields): { ownerId: string; ownerType: OwnerType } {
  const owner = ownerFromAliases(fields);
  return {
    ownerId: owner.ownerId ?? DEFAULT_OWNER.ownerId,
    ownerType: owner.ownerType ?? (owner.ownerId ? 'user' : DEFAULT_OWNER.ownerType),
  };
}

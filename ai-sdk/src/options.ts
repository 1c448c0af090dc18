import type { MemoryClient, Metadata, OwnerTypeInput } from '@mnemo/client';

/**
 * The parts of a `MemoryClient` the tools and the middleware use: pass a `MemoryClient` (or a
 * `MnemoClient`), configured with your server's base URL and API key.
 */
export type MnemoClientLike = Pick<MemoryClient, 'memories' | 'search' | 'context'>;

/**
 * Whose memories a tool or the middleware reads and writes: an owner id (a `user` unless you say
 * otherwise), or the id with its type. Fixed by your app, never chosen by the model: a model
 * that could name the owner could read another user's memories.
 */
export type MnemoOwner = string | { ownerId: string; ownerType?: OwnerTypeInput | undefined };

/** Where memories are kept inside an owner: the same labels as the client's `scope` fields. */
export interface MnemoScope {
  /** A label such as a project or a conversation topic. */
  scope?: string | undefined;
  namespace?: string | undefined;
  containerTag?: string | undefined;
}

/** Options shared by {@link mnemoTools} and {@link mnemoMemory}. */
export interface MnemoBaseOptions extends MnemoScope {
  /** A `MemoryClient` of `@mnemo/client`. */
  client: MnemoClientLike;
  /** Whose memories: see {@link MnemoOwner}. */
  owner: MnemoOwner;
}

/** The client's owner fields for `owner`. */
export function ownerParams(owner: MnemoOwner): {
  ownerId: string;
  ownerType?: OwnerTypeInput;
} {
  if (typeof owner === 'string') return { ownerId: owner };
  return { ownerId: owner.ownerId, ...(owner.ownerType ? { ownerType: owner.ownerType } : {}) };
}

/** The scope labels that were given, and only those (the client sends what it gets). */
export function scopeParams(scope: MnemoScope): MnemoScope {
  return Object.fromEntries(
    (['scope', 'namespace', 'containerTag'] as const).flatMap((key) =>
      scope[key] === undefined ? [] : [[key, scope[key]]],
    ),
  );
}

/** What this package stamps on the memories it writes, after the app's own metadata. */
export function writeMetadata(base: Metadata | undefined, roles: string): Metadata {
  return { ...base, ingest: 'ai-sdk', roles };
}

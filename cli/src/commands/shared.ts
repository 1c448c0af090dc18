import { Option, type Command } from 'commander';
import {
  CLIENT_OWNER_TYPES,
  LEGACY_OWNER_TYPES,
  OWNER_TYPES,
  type OwnerParams,
  type OwnerTypeInput,
} from '@mnemo/client';
import { choice, orList } from '../parse.js';

/** `user, team or app (agent means app)` */
const OWNER_TYPE_HELP = `${orList(OWNER_TYPES)} (${Object.entries(LEGACY_OWNER_TYPES)
  .map(([legacy, type]) => `${legacy} means ${type}`)
  .join(', ')})`;

/** `--owner-id` / `--owner-type` (and the legacy `--user-id`), as every owner-scoped command takes them. */
export function ownerOptions(command: Command): Command {
  return command
    .option('--owner-id <id>', "owner of the memories (your end user's id, or a team or app id)")
    .addOption(
      new Option('--owner-type <type>', OWNER_TYPE_HELP).argParser(choice(CLIENT_OWNER_TYPES)),
    )
    .option('--user-id <id>', 'legacy alias of --owner-id');
}

export interface OwnerFlags {
  ownerId?: string;
  ownerType?: OwnerTypeInput;
  userId?: string;
}

export function ownerFrom(flags: OwnerFlags): OwnerParams {
  return { ownerId: flags.ownerId, ownerType: flags.ownerType, userId: flags.userId };
}

/** Drops undefined values so that `--json` and request bodies stay minimal. */
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

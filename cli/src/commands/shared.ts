import { Option, type Command } from 'commander';
import type { OwnerParams, OwnerTypeInput } from '@mnemo/client';
import { choice } from '../parse.js';

const OWNER_TYPE_CHOICES = ['user', 'team', 'app', 'agent'] as const;

/** `--owner-id` / `--owner-type` (and the legacy `--user-id`), as every owner-scoped command takes them. */
export function ownerOptions(command: Command): Command {
  return command
    .option('--owner-id <id>', "owner of the memories (your end user's id, or a team or app id)")
    .addOption(
      new Option('--owner-type <type>', 'user, team or app (agent means app)').argParser(
        choice(OWNER_TYPE_CHOICES),
      ),
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

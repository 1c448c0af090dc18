import type { AppConfig } from '../config.js';
import { ADVISORY_LOCKS, inLockedTransaction } from '../db/advisory-lock.js';
import type { Database } from '../db/client.js';
import {
  countWorkspaces,
  createWorkspace,
  findFirstWorkspace,
  findWorkspaceByName,
} from '../db/queries/workspaces.js';
import type { ApiKeyService, MintedApiKey } from './api-keys/index.js';

export interface BootstrapResult {
  workspaceId: string | undefined;
  /** A key minted on this start (first run, no configured key): print it once. */
  mintedKey?: MintedApiKey;
  /** The configured MNEMO_BOOTSTRAP_API_KEY is registered. */
  configuredKey: boolean;
}

/**
 * First run must leave the user able to make a call: with MNEMO_BOOTSTRAP_API_KEY, that key is
 * registered for the bootstrap workspace (idempotently, every start); without it, an empty
 * database gets a default workspace and a fresh key that the caller prints once.
 *
 * One transaction holding a transaction-scoped advisory lock: instances started together on an
 * empty database run it one after the other, so the second sees the first's workspace and key
 * (exactly one workspace, one printed key, no unique-key crash). The lock goes with the
 * transaction, so a killed instance cannot leave it held.
 */
export async function ensureBootstrapWorkspace(
  db: Database,
  apiKeys: ApiKeyService,
  config: Pick<AppConfig, 'bootstrapApiKey' | 'bootstrapWorkspaceName'>,
): Promise<BootstrapResult> {
  const name = config.bootstrapWorkspaceName;
  return inLockedTransaction(db, ADVISORY_LOCKS.bootstrap, async (tx) => {
    if (config.bootstrapApiKey) {
      const workspace =
        (await findWorkspaceByName(tx, name)) ??
        (await findFirstWorkspace(tx)) ??
        (await createWorkspace(tx, { name }));
      await apiKeys.register(workspace.id, 'bootstrap', config.bootstrapApiKey, { writer: tx });
      return { workspaceId: workspace.id, configuredKey: true };
    }
    if ((await countWorkspaces(tx)) > 0) {
      return { workspaceId: (await findFirstWorkspace(tx))?.id, configuredKey: false };
    }
    const workspace = await createWorkspace(tx, { name });
    const mintedKey = await apiKeys.mint(workspace.id, 'default', { writer: tx });
    return { workspaceId: workspace.id, mintedKey, configuredKey: false };
  });
}

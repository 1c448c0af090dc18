import type { AppConfig } from '../config.js';
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
 */
export async function ensureBootstrapWorkspace(
  db: Database,
  apiKeys: ApiKeyService,
  config: Pick<AppConfig, 'bootstrapApiKey' | 'bootstrapWorkspaceName'>,
): Promise<BootstrapResult> {
  const name = config.bootstrapWorkspaceName;
  if (config.bootstrapApiKey) {
    const workspace =
      (await findWorkspaceByName(db, name)) ??
      (await findFirstWorkspace(db)) ??
      (await createWorkspace(db, { name }));
    await apiKeys.register(workspace.id, 'bootstrap', config.bootstrapApiKey);
    return { workspaceId: workspace.id, configuredKey: true };
  }
  if ((await countWorkspaces(db)) > 0) {
    return { workspaceId: (await findFirstWorkspace(db))?.id, configuredKey: false };
  }
  const workspace = await createWorkspace(db, { name });
  const mintedKey = await apiKeys.mint(workspace.id, 'default');
  return { workspaceId: workspace.id, mintedKey, configuredKey: false };
}

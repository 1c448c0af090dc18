/**
 * Mints an API key for a workspace: `pnpm keys:create -- --workspace <name|id> [--name <label>]
 * [--create-workspace] [--json]`. On embedded PGlite stop the server first (one process owns the
 * data folder); on PostgreSQL it can run beside the server.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import {
  createWorkspace,
  findWorkspaceByName,
  getWorkspaceById,
} from '../db/queries/workspaces.js';
import { ApiKeyService } from '../services/api-keys/index.js';
import { isUuid } from '../ids.js';

/** A request the command cannot carry out (a missing workspace): printed as one line. */
class CommandError extends Error {
  override name = 'CommandError';
}

async function run(): Promise<void> {
  // `pnpm keys:create -- --workspace x` hands the script a literal `--` first.
  const args = process.argv.slice(2);
  if (args[0] === '--') args.shift();
  const { values } = parseArgs({
    args,
    options: {
      workspace: { type: 'string' },
      name: { type: 'string', default: 'cli' },
      'create-workspace': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  const config = loadConfig();
  const target = values.workspace ?? config.bootstrapWorkspaceName;
  const database = await openDatabase(
    config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: config.dataDir },
  );
  try {
    const { db } = database;
    let workspace =
      (isUuid(target) ? await getWorkspaceById(db, target) : undefined) ??
      (await findWorkspaceByName(db, target));
    if (!workspace && values['create-workspace'])
      workspace = await createWorkspace(db, { name: target });
    if (!workspace) {
      throw new CommandError(`No workspace "${target}" (pass --create-workspace to make it)`);
    }
    const apiKeys = await ApiKeyService.create(db, { salt: config.apiKeySalt });
    const key = await apiKeys.mint(workspace.id, values.name);
    if (values.json) {
      console.log(
        JSON.stringify({ workspace_id: workspace.id, api_key_id: key.id, api_key: key.plaintext }),
      );
    } else {
      console.log(
        `API key for workspace "${workspace.name}" (${workspace.id}), shown once:\n\n  ${key.plaintext}\n`,
      );
    }
  } finally {
    await database.close();
  }
}

run().catch((error: unknown) => {
  console.error(`keys:create failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

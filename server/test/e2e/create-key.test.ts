import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { ApiKeyService } from '../../src/services/api-keys/index.js';
import { testBackend } from '../support/db.js';

const run = promisify(execFile);
const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url));

describe.runIf(testBackend() === 'pglite')(
  'keys:create command [pglite]',
  () => {
    let dataDir: string;
    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'mnemo-keys-'));
    });
    afterAll(async () => rm(dataDir, { recursive: true, force: true }));

    const createKey = (args: string[]) =>
      run(
        process.execPath,
        ['--import', 'tsx', '--conditions=mnemo-source', 'src/commands/create-key.ts', ...args],
        {
          cwd: SERVER_DIR,
          env: { ...process.env, MNEMO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
        },
      );

    it('mints a working key, with or without the `--` pnpm passes through', async () => {
      const { stdout } = await createKey([
        '--',
        '--workspace',
        'ops',
        '--create-workspace',
        '--json',
      ]);
      const minted = JSON.parse(stdout) as { workspace_id: string; api_key: string };
      const again = await createKey(['--workspace', 'ops', '--json']);
      const second = JSON.parse(again.stdout) as { workspace_id: string; api_key: string };
      expect(second.workspace_id).toBe(minted.workspace_id);
      expect(second.api_key).not.toBe(minted.api_key);

      const database = await openDatabase({ dataDir });
      try {
        const keys = await ApiKeyService.create(database.db);
        for (const key of [minted.api_key, second.api_key]) {
          expect(await keys.authenticate(key)).toMatchObject({ workspaceId: minted.workspace_id });
        }
      } finally {
        await database.close();
      }
    });

    it('refuses an unknown workspace without --create-workspace', async () => {
      await expect(createKey(['--workspace', 'nowhere'])).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('No workspace "nowhere"'),
      });
    });
  },
  60_000,
);

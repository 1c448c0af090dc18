/**
 * Installs the mem0 peer (`mem0ai`, the `better-sqlite3` its local vector store needs and the
 * `pg` its pgvector store needs) into bench/.peer with npm, outside the pnpm workspace: as workspace dependencies they pull optional
 * peers (better-sqlite3, @cloudflare/workers-types) into drizzle-orm's resolution and split it
 * into two copies whose types no longer match. better-sqlite3 is built from source against this
 * Node's headers (its prebuilt binaries come from GitHub, and its newest major needs Node 22).
 * Never fails the bench: when the install is impossible the peer reports why.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const PEER_DIR = join(import.meta.dirname, '.peer');
// pg: the driver mem0's pgvector vector store loads (the second peer row).
const DEPENDENCIES = { mem0ai: '3.3.1', 'better-sqlite3': '12.11.1', pg: '8.23.1' };

function loads() {
  // In a child: a native binary built for another Node ABI can crash rather than throw.
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      "const D = require('better-sqlite3'); new D(':memory:').prepare('select 1').get(); require.resolve('mem0ai/oss'); require.resolve('pg')",
    ],
    { cwd: PEER_DIR, stdio: 'ignore' },
  );
  return probe.status === 0;
}

if (existsSync(join(PEER_DIR, 'node_modules')) && loads()) process.exit(0);
mkdirSync(PEER_DIR, { recursive: true });
writeFileSync(
  join(PEER_DIR, 'package.json'),
  JSON.stringify({ name: 'mnemo-bench-peer', private: true, dependencies: DEPENDENCIES }, null, 2) +
    '\n',
);
process.stderr.write(
  '[bench] installing the mem0 peer into bench/.peer (builds better-sqlite3: about 2 minutes, once)…\n',
);
try {
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--legacy-peer-deps', '--no-package-lock'],
    {
      cwd: PEER_DIR,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        npm_config_build_from_source: 'true',
        npm_config_nodedir: resolve(process.execPath, '../..'),
      },
    },
  );
} catch (error) {
  process.stderr.write(
    `[bench] mem0 peer install failed (${error.message}); the peer will be reported as not run\n`,
  );
}
process.exit(0);

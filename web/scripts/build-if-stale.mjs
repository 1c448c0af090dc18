/**
 * Builds the console (vite) only when its inputs changed since the last build: `pnpm start` runs
 * this, so a start after an unchanged checkout does not spend seconds on vite. The inputs are the
 * console's own sources and the contract's (bundled into it), plus the lockfile (vite, preact);
 * their digest is written beside the build, in `dist/.inputs-sha256`.
 * Usage: node scripts/build-if-stale.mjs [--force]
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const rootDir = join(webDir, '..');
const distDir = join(webDir, 'dist');
const stampFile = join(distDir, '.inputs-sha256');
const INPUTS = [
  'web/src',
  'web/index.html',
  'web/vite.config.ts',
  'web/package.json',
  'contract/src',
  'pnpm-lock.yaml',
];

function filesUnder(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => filesUnder(join(path, entry.name)));
}

function inputsDigest() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => filesUnder(join(rootDir, input)))) {
    hash.update(relative(rootDir, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const digest = inputsDigest();
const built = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : undefined;
if (
  built === digest &&
  existsSync(join(distDir, 'index.html')) &&
  !process.argv.includes('--force')
) {
  process.stdout.write('console: up to date (web/dist)\n');
  process.exit(0);
}
process.stdout.write(
  `console: building web/dist (${built === undefined ? 'no build yet' : 'sources changed'})…\n`,
);
const started = performance.now();
const vite = spawnSync(process.execPath, [join(webDir, 'node_modules/vite/bin/vite.js'), 'build'], {
  cwd: webDir,
  stdio: 'inherit',
});
if (vite.status !== 0) process.exit(vite.status ?? 1);
writeFileSync(stampFile, `${digest}\n`);
process.stdout.write(`console: built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

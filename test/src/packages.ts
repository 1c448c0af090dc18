import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const execFileAsync = promisify(execFile);

/**
 * Runs pnpm without needing it on PATH: the pnpm running this test when there is one (pnpm sets
 * `npm_execpath` for the scripts it runs), else the version the root package.json pins, through
 * npx. CI and contributors often have only `npx -y pnpm@…`.
 */
export async function pnpm(
  args: string[],
  cwd: string,
): Promise<{ stdout: string; stderr: string }> {
  const running = process.env.npm_execpath;
  if (running && /pnpm(\.c?js)?$/.test(running)) {
    return execFileAsync(process.execPath, [running, ...args], { cwd, maxBuffer: 16 << 20 });
  }
  const { packageManager } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    packageManager: string;
  };
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  return execFileAsync(npx, ['-y', packageManager, ...args], { cwd, maxBuffer: 16 << 20 });
}

const LOCK = join(ROOT, 'node_modules', '.cache', 'mnemo-package-build.lock');

function holderAlive(): boolean {
  try {
    const pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but is not ours.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds the lock on the packages' build outputs (client/dist, cli/dist) until the returned
 * function is called. Test files run in parallel: one that rebuilds (tsup cleans dist first)
 * must not run while another executes those files. A lock left by a dead process is taken over.
 */
export async function holdBuildLock(): Promise<() => void> {
  mkdirSync(dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      await new Promise((done) => setTimeout(done, 250));
      // A holder writes its pid right after mkdir; a lock without one for seconds is dead too.
      let stale: boolean;
      try {
        readFileSync(join(LOCK, 'pid'));
        stale = !holderAlive();
      } catch {
        const lock = statSync(LOCK, { throwIfNoEntry: false });
        stale = lock !== undefined && Date.now() - lock.mtimeMs > 5_000;
      }
      if (stale) rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

/** Builds @mnemo/client and @mnemo/cli (the CLI resolves the client from its build). */
export async function buildClientAndCli(): Promise<void> {
  await pnpm(
    ['--filter', '@mnemo/client', '--filter', '@mnemo/cli', '--workspace-concurrency=1', 'build'],
    ROOT,
  );
}

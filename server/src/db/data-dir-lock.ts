import { readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Embedded PGlite must have one process per data folder: two would corrupt it. A pid file marks
 * the owner; a stale one (its process is gone) is taken over.
 */
export class DataDirInUseError extends Error {}

const LOCK_FILE = 'mnemo.pid';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data folder for this process; resolves to the release function. */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await writeFile(path, String(process.pid), { flag: 'wx' });
      return async () => {
        await unlink(path).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new DataDirInUseError(
          `The data folder ${dataDir} is in use by process ${owner} (is the server running?). ` +
            'Stop it first, or use PostgreSQL (DATABASE_URL) to share one database between processes.',
        );
      }
      if (owner === process.pid) {
        throw new DataDirInUseError(`The data folder ${dataDir} is already open in this process`);
      }
      await unlink(path).catch(() => undefined);
    }
  }
  throw new DataDirInUseError(`Could not lock the data folder ${dataDir}`);
}

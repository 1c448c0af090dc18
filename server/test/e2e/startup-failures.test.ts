import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackend } from '../support/db.js';
import { startExpectingFailure, startServer, stop } from '../support/server-process.js';

/** A loopback port something holds (`close` frees it). */
async function heldPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

// Start-up failures do not depend on the test database: run them once, on the PGlite project.
describe.skipIf(testBackend() !== 'pglite')('start-up failures of the server entry point', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mnemo-startup-'));
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('port in use: one line naming the port and PORT, exit 1, and no key minted', async () => {
    const held = await heldPort();
    try {
      // A fresh PGlite folder is migrated before the port is tried: slow on a busy machine.
      const failed = await startExpectingFailure(
        { PORT: String(held.port), MNEMO_DATA_DIR: dataDir },
        { timeoutMs: 90_000 },
      );
      expect(failed.code).toBe(1);
      expect(lines(failed.stderr)).toEqual([
        `mnemo: port ${held.port} on 127.0.0.1 is already in use (EADDRINUSE): stop the process that holds it, or set PORT to a free port`,
      ]);
      expect(failed.stdout).not.toContain('mnemo listening');
    } finally {
      await held.close();
    }
    // The same data folder on a free port: the first successful start is the one that mints
    // and shows the key, so none was lost to the failed one.
    const started = await startServer({ MNEMO_DATA_DIR: dataDir }, { timeoutMs: 90_000 });
    try {
      expect(started.stderr()).toMatch(/API key \(shown once, keep it safe\):\s+mnemo_/);
    } finally {
      expect(await stop(started.child)).toBe(0);
    }
  }, 200_000);

  it('database unreachable: one line with the URL (password hidden), the cause and DATABASE_URL', async () => {
    const held = await heldPort();
    await held.close(); // a port nothing listens on: connection refused
    const failed = await startExpectingFailure({
      DATABASE_URL: `postgres://mnemo:hunter2secret@127.0.0.1:${held.port}/mnemo`,
    });
    expect(failed.code).toBe(1);
    expect(lines(failed.stderr)).toEqual([
      `mnemo: cannot reach the database at postgres://mnemo:***@127.0.0.1:${held.port}/mnemo (ECONNREFUSED: connection refused): start PostgreSQL there, or set DATABASE_URL to one that runs (unset: the embedded database in MNEMO_DATA_DIR)`,
    ]);
    expect(failed.stderr + failed.stdout).not.toContain('hunter2secret');
  }, 60_000);

  it('bad configuration: one line naming each variable and why', async () => {
    const failed = await startExpectingFailure({ PORT: 'eighty', LOG_FORMAT: 'fancy' });
    expect(failed.code).toBe(1);
    const [line, ...rest] = lines(failed.stderr);
    expect(rest).toEqual([]);
    expect(line).toMatch(/^mnemo: invalid configuration: PORT: .+; LOG_FORMAT: .+/);
  }, 60_000);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createEmptyPostgresDatabase,
  describeDb,
  testBackend,
  type EmptyPostgresDatabase,
} from '../support/db.js';

const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url));

interface Started {
  child: ChildProcess;
  baseUrl: string;
  stderr: () => string;
}

/** Starts the real entry point (`pnpm start` runs the same) and waits for its listening line. */
function startServer(env: Record<string, string>): Promise<Started> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=mnemo-source', 'src/main.ts'],
    {
      cwd: SERVER_DIR,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    let started = false;
    const fail = (reason: string) => {
      if (started) return;
      started = true;
      child.kill('SIGKILL');
      reject(new Error(`${reason}:\n${stdout}\n${stderr}`));
    };
    const timer = setTimeout(() => fail('server did not start in time'), 25_000);
    child.once('exit', (code) => fail(`server exited with ${code}`));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)","msg":"mnemo listening"/.exec(stdout);
      if (match?.[1] && !started) {
        started = true;
        clearTimeout(timer);
        resolve({ child, baseUrl: match[1], stderr: () => stderr });
      }
    });
  });
}

/** SIGTERM, then the exit code (null if it had to be killed after 15 s). */
function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(killer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

describeDb('first run of the server entry point', () => {
  let dataDir: string;
  let postgresDb: EmptyPostgresDatabase | undefined;
  let env: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mnemo-first-run-'));
    if (testBackend() === 'postgres') {
      postgresDb = await createEmptyPostgresDatabase();
      env = { DATABASE_URL: postgresDb.databaseUrl };
    } else {
      env = { MNEMO_DATA_DIR: dataDir };
    }
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await postgresDb?.drop();
  });

  it('prints a key once, serves health and auth, stops cleanly and keeps the key across restarts', async () => {
    const first = await startServer(env);
    let apiKey: string;
    try {
      apiKey =
        /API key \(shown once, keep it safe\):\s+(mnemo_[A-Za-z0-9_-]+)/.exec(
          first.stderr(),
        )?.[1] ?? '';
      expect(apiKey).toMatch(/^mnemo_/);

      const health = await fetch(`${first.baseUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', version: expect.any(String) });
      const keyed = await fetch(`${first.baseUrl}/v1/memories`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(keyed.status).toBe(200);
      expect(await keyed.json()).toMatchObject({ results: [], total: 0 });
      const anonymous = await fetch(`${first.baseUrl}/v1/memories`);
      expect(anonymous.status).toBe(401);
      const body = (await anonymous.json()) as { error: { code: string }; request_id: string };
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(body.request_id).toBe(anonymous.headers.get('x-request-id'));
    } finally {
      expect(await stop(first.child)).toBe(0);
    }

    const second = await startServer(env);
    try {
      expect(second.stderr()).not.toContain('API key (shown once');
      const keyed = await fetch(`${second.baseUrl}/v1/memories`, {
        headers: { 'x-api-key': apiKey },
      });
      expect(keyed.status).toBe(200);
      await keyed.body?.cancel();
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  }, 60_000);
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from '../../server/test/support/app.js';
import { describeDb } from '../../server/test/support/db.js';
import { run } from '../src/run.js';

// In-process runs of `mnemo export`, `mnemo import` (of an export) and `mnemo erase` against a
// real server on loopback; the client pages the export through its cursor (page size 500 is
// larger than this owner, so the cursor path is also covered by the server suite).
describeDb('mnemo export, import and erase against a real server', () => {
  let t: TestApp;
  let target: TestTenant;
  let listener: Server;
  let baseUrl: string;
  const home = mkdtempSync(join(tmpdir(), 'mnemo-cli-home-'));
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-export-'));

  async function cli(argv: string[], apiKey = t.tenant.apiKey) {
    let stdout = '';
    let stderr = '';
    const code = await run(argv, {
      stdout: { write: (chunk: string) => (stdout += chunk) },
      stderr: { write: (chunk: string) => (stderr += chunk) },
      env: { HOME: home, MNEMO_BASE_URL: baseUrl, MNEMO_API_KEY: apiKey },
    });
    return { code, stdout, stderr };
  }

  beforeAll(async () => {
    t = await createTestApp();
    target = await t.addTenant('target');
    listener = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listener.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    for (const text of ['Jane lives in Paris', 'Jane has a cat named Milo', 'Jane is a nurse']) {
      const res = await fetch(`${baseUrl}/v1/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': t.tenant.apiKey },
        body: JSON.stringify({ text, user_id: 'jane', extract: false }),
      });
      expect(res.status).toBe(200);
    }
    // Booting and migrating a fresh database takes long on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => listener?.close(resolve));
    await t?.close();
  });

  it('exports to stdout, imports the file elsewhere (idempotently) and erases with a receipt', async () => {
    const exported = await cli(['export', '--owner', 'jane']);
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.type)).toEqual(['header', 'memory', 'memory', 'memory', 'end']);
    const file = join(dir, 'jane.jsonl');
    writeFileSync(file, exported.stdout);

    const imported = await cli(['import', file, '--json'], target.apiKey);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: { memories: 3 }, skipped: 0 });
    const again = await cli(['import', file, '--json'], target.apiKey);
    expect(JSON.parse(again.stdout)).toMatchObject({ imported: { memories: 0 }, skipped: 3 });

    const refused = await cli(['erase', '--owner', 'jane']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--yes/);
    const erased = await cli(['erase', '--owner', 'jane', '--yes']);
    expect(erased.code).toBe(0);
    expect(erased.stdout).toMatch(/^user:jane erased at .* \(receipt [0-9a-f-]{36}\): memories 3/);
    const after = await cli(['export', '--owner', 'jane']);
    expect(after.stdout.trim().split('\n')).toHaveLength(2);
    // The other workspace's copy stays.
    const copy = await cli(['export', '--owner', 'jane'], target.apiKey);
    expect(copy.stdout.trim().split('\n')).toHaveLength(5);
  });
});

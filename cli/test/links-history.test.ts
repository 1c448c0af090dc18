import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/test/support/app.js';
import { describeDb } from '../../server/test/support/db.js';
import { run } from '../src/run.js';

// In-process runs of `mnemo links`, `mnemo history` and `mnemo pins` against a real server on loopback.
describeDb('mnemo links, history and pins against a real server', () => {
  let t: TestApp;
  let listener: Server;
  let baseUrl: string;
  const home = mkdtempSync(join(tmpdir(), 'mnemo-cli-home-'));
  const ids: Record<string, string> = {};

  /** A plain request to the server, as any other caller would send it. */
  async function post(path: string, body: object, headers: Record<string, string> = {}) {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.tenant.apiKey, ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function cli(argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await run(argv, {
      stdout: { write: (chunk: string) => (stdout += chunk) },
      stderr: { write: (chunk: string) => (stderr += chunk) },
      env: { HOME: home, MNEMO_BASE_URL: baseUrl, MNEMO_API_KEY: t.tenant.apiKey },
    });
    return { code, stdout, stderr };
  }

  beforeAll(async () => {
    t = await createTestApp();
    listener = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listener.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    for (const [key, text] of [
      ['paris', 'Jane lives in Paris with her cat Milo'],
      ['milo', 'Milo the cat is allergic to fish'],
    ] as const) {
      const res = await post('/v1/memories', { text, user_id: 'jane', extract: false });
      ids[key] = res.body.memory_id as string;
    }
    // Booting and migrating a fresh database takes long on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => listener?.close(resolve));
    await t?.close();
  });

  it('links add, list and remove', async () => {
    const added = await cli(['links', 'add', ids.paris!, ids.milo!, '--relation', 'mentions']);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).toBe(`linked: ${ids.paris} -[mentions]-> ${ids.milo}\n`);
    const again = await cli(['links', 'add', ids.paris!, ids.milo!, '--relation', 'mentions']);
    expect(again.stdout).toBe(`already linked: ${ids.paris} -[mentions]-> ${ids.milo}\n`);

    const listed = await cli(['--json', 'links', 'list', ids.milo!]);
    expect(JSON.parse(listed.stdout).results).toEqual([
      expect.objectContaining({ source_id: ids.paris, target_id: ids.milo, relation: 'mentions' }),
    ]);

    const removed = await cli(['links', 'remove', ids.paris!, ids.milo!]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(`deleted 1 link\n  ${ids.paris} -[mentions]-> ${ids.milo}\n`);
    const missing = await cli(['links', 'remove', ids.paris!, ids.milo!]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No link');
  });

  it('history lists saved searches and history replay reruns one', async () => {
    const searched = await post(
      '/v1/search',
      { query: 'cat allergic fish', user_id: 'jane' },
      { 'x-save-history': '1' },
    );
    expect(searched.status).toBe(200);

    const listed = await cli(['--json', 'history', '--owner-id', 'jane', '--page-size', '5']);
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.stdout);
    expect(page).toMatchObject({ page: 1, page_size: 5, total: 1 });
    const queryId = page.results[0].query_id as string;
    expect(page.results[0].query).toBe('cat allergic fish');

    const human = await cli(['history']);
    expect(human.stdout).toContain(queryId);
    expect(human.stdout).toContain('cat allergic fish');

    const replayed = await cli(['--json', 'history', 'replay', queryId]);
    expect(replayed.code).toBe(0);
    const { query_id, ...response } = JSON.parse(replayed.stdout);
    expect(query_id).toBe(queryId);
    expect(response).toEqual(searched.body);

    const unknown = await cli(['history', 'replay', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
  });

  it('pins add, list and remove; pinned memories come first in context', async () => {
    const added = await cli(['--json', 'pins', 'add', ids.milo!, '--owner-id', 'jane']);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      owner_id: 'jane',
      owner_type: 'user',
      pins: [{ memory_id: ids.milo, lifecycle_state: 'active' }],
    });
    const listed = await cli(['pins', 'list', '--owner-id', 'jane']);
    expect(listed.stdout).toContain(ids.milo);
    expect(listed.stdout).toContain('user:jane: 1 of 50 pins');

    const context = await post('/v1/context', { query: 'Paris', user_id: 'jane' });
    expect((context.body.citations as Array<{ memory_id: string }>)[0]?.memory_id).toBe(ids.milo);

    const removed = await cli(['pins', 'remove', ids.milo!, '--owner-id', 'jane']);
    expect(removed.stdout).toBe('user:jane has no pins\n');
    const foreign = await cli([
      'pins',
      'add',
      '00000000-0000-4000-8000-000000000000',
      '--owner-id',
      'jane',
    ]);
    expect(foreign.code).toBe(1);
  });
});

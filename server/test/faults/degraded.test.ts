import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import type * as SearchRecallQueries from '../../src/db/queries/search-recall.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { createDeps, type AppDeps } from '../../src/deps.js';
import { createLogger } from '../../src/logger.js';
import { testConfig } from '../support/app.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';

/**
 * The search's statement is wrapped, not replaced: it runs as usual until the test makes episode
 * storage "unavailable", then a statement with an episode part fails as a failing query would
 * (42P01), and one without runs as usual.
 */
const episodes = vi.hoisted(() => ({ unavailable: false }));
vi.mock('../../src/db/queries/search-recall.js', async (importOriginal) => {
  const actual = await importOriginal<typeof SearchRecallQueries>();
  return {
    ...actual,
    searchRecall: (...args: Parameters<typeof actual.searchRecall>) => {
      if (episodes.unavailable && args[2].episodes)
        return Promise.reject(
          Object.assign(new Error('relation is unavailable'), { code: '42P01' }),
        );
      return actual.searchRecall(...args);
    },
  };
});

interface LogLine {
  level: number;
  msg: string;
  task?: string;
  capability?: string;
}

describeDb('degraded optional internals fail soft and log once', () => {
  let database: TestDatabase;
  let deps: AppDeps;
  let app: ReturnType<typeof createApp>;
  let auth: string;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = testConfig({ LOG_LEVEL: 'info' });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as LogLine);
        done();
      },
    });
    deps = await createDeps(config, createLogger('info', sink), database);
    app = createApp(deps);
    const workspace = await createWorkspace(database.db, { name: 'degraded' });
    auth = `Bearer ${(await deps.apiKeys.mint(workspace.id, 'test')).plaintext}`;
  }, 120_000);

  afterAll(async () => {
    await deps.background.drain();
    await deps.quota.drain?.();
    await deps.statistics.drain();
    await deps.audit.drain();
    await deps.limits.close();
    await database.close();
  });

  const write = (text: string) =>
    request(app).post('/v1/memories').set('authorization', auth).send({ user_id: 'u1', text });
  const search = (query: string) =>
    request(app).post('/v1/search').set('authorization', auth).send({ user_id: 'u1', query });

  it('searches and writes go on when learning signals cannot be stored', async () => {
    await database.db.execute(sql`alter table learning_signals rename to learning_signals_away`);
    try {
      for (let i = 0; i < 6; i += 1) {
        expect((await write(`signal outage note ${i} about the garden hose`)).status).toBe(200);
        expect((await search(`garden hose ${i}`)).status).toBe(200);
        // One background write per search, each failing.
        await deps.background.drain();
      }
      const failures = lines.filter((l) => l.task === 'learning signals' && l.level === 40);
      expect(failures).toHaveLength(1);
    } finally {
      await database.db.execute(sql`alter table learning_signals_away rename to learning_signals`);
    }
    expect((await search('garden hose')).status).toBe(200);
    await deps.background.drain();
    expect(lines.some((l) => l.task === 'learning signals' && l.msg.includes('recovered'))).toBe(
      true,
    );
  });

  it('search goes on without episode context when its part of the statement fails, logged once', async () => {
    for (let i = 0; i < 3; i += 1)
      expect((await write(`episode note ${i}: the ladder leans on the shed`)).status).toBe(200);
    const before = await search('ladder shed');
    expect(before.status).toBe(200);
    episodes.unavailable = true;
    try {
      for (let i = 0; i < 4; i += 1) {
        const response = await search('ladder shed');
        expect(response.status).toBe(200);
        // The direct matches are still found.
        expect(response.body.results.length).toBeGreaterThan(0);
      }
      const failures = lines.filter((l) => l.capability?.includes('episode') && l.level === 40);
      expect(failures).toHaveLength(1);
    } finally {
      episodes.unavailable = false;
    }
    expect((await search('ladder shed')).status).toBe(200);
    expect(
      lines.some((l) => l.capability?.includes('episode') && l.msg.includes('recovered')),
    ).toBe(true);
  });
});

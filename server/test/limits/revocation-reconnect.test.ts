import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { revokeApiKeyById } from '../../src/db/queries/api-keys.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { ApiKeyService } from '../../src/services/api-keys/index.js';
import {
  redisRevocations,
  type RevocationChannel,
} from '../../src/services/api-keys/revocations.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';
import { TEST_REDIS_URL } from '../support/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Redis client id of the connection named `name` (subscribed, so it cannot ask itself). */
async function clientId(admin: Redis, name: string): Promise<string | undefined> {
  const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
  const line = list.split('\n').find((entry) => entry.includes(` name=${name} `));
  return /(?:^|\s)id=(\d+)/.exec(line ?? '')?.[1];
}

describeDb('key revocations after the subscriber reconnects to Redis', () => {
  const suffix = randomBytes(6).toString('hex');
  const connectionName = `mnemo-test-revocations-${suffix}`;
  let database: TestDatabase;
  let admin: Redis;
  let channel: RevocationChannel;

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new Redis(TEST_REDIS_URL);
    channel = redisRevocations(TEST_REDIS_URL, {
      channel: `mnemo-test-revoked-${suffix}`,
      connectionName,
    });
  });
  afterAll(async () => {
    await channel?.close();
    admin?.disconnect();
    await database?.close();
  });

  it('drops every cached key, since revocations published meanwhile were missed', async () => {
    const keys = await ApiKeyService.create(database.db, { salt: 'revocation-reconnect-salt' });
    await keys.shareRevocations(channel);
    const workspace = await createWorkspace(database.db, { name: 'revocations' });
    const key = await keys.mint(workspace.id, 'cached');
    expect(await keys.authenticate(key.plaintext)).toMatchObject({ apiKeyId: key.id });

    // Revoked while this instance hears nothing (as if its Redis connection were down): the
    // verified key stays cached.
    await revokeApiKeyById(database.db, key.id);
    expect(await keys.authenticate(key.plaintext)).toMatchObject({ apiKeyId: key.id });

    let id: string | undefined;
    for (let i = 0; i < 50 && !id; i++) {
      id = await clientId(admin, connectionName);
      if (!id) await sleep(100);
    }
    expect(id).toBeDefined();
    await admin.call('CLIENT', 'KILL', 'ID', id!);

    // Once the subscription is back, the cache is gone and the database's answer counts.
    const killed = Date.now();
    let answer = await keys.authenticate(key.plaintext);
    while (answer && Date.now() - killed < 5_000) {
      await sleep(50);
      answer = await keys.authenticate(key.plaintext);
    }
    expect(answer).toBeUndefined();
    expect(await clientId(admin, connectionName)).not.toBe(id);
  });
});

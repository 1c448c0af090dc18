import { count, eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { memories, usageCounters } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const MAX_BYTES = 2_048;

describeDb('metadata: bounded on writes and counted by the storage meter', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MNEMO_LIMITS: 'on', MNEMO_METADATA_MAX_BYTES: String(MAX_BYTES) });
  }, 60_000);
  afterAll(async () => t?.close());

  const storageUsed = async () => {
    await t.deps.quota.drain?.();
    const rows = await t.database.db
      .select()
      .from(usageCounters)
      .where(eq(usageCounters.workspaceId, t.tenant.workspaceId));
    return Number(rows.find((row) => row.resource === 'storage')?.used ?? 0);
  };
  const write = (text: string, metadata: Record<string, unknown>) =>
    request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ text, owner_id: 'meta', owner_type: 'user', metadata });

  it('refuses metadata past MNEMO_METADATA_MAX_BYTES with 400 in the envelope, storing nothing', async () => {
    const res = await write('Ada keeps her notes in a blue binder', {
      blob: 'x'.repeat(MAX_BYTES),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: expect.stringMatching(
          /^metadata is \d+ bytes as JSON; a memory stores at most 2048$/,
        ),
        details: { metadata: ['must be at most 2048 bytes as JSON (UTF-8)'] },
      },
      request_id: res.headers['x-request-id'],
    });
    // Many small keys add up the same way.
    const keys = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i]));
    expect((await write('Ada keeps her notes in a green binder', keys)).status).toBe(400);
    const [stored] = await t.database.db
      .select({ n: count() })
      .from(memories)
      .where(eq(memories.workspaceId, t.tenant.workspaceId));
    expect(stored!.n).toBe(0);
  });

  it('counts the metadata as JSON with the text, and gives it back on delete', async () => {
    const before = await storageUsed();
    const text = 'Grace files her receipts by month';
    // Multi-byte characters: the meter counts UTF-8 bytes, not characters.
    const metadata = { source: 'scanner', note: 'é'.repeat(600), pages: 12 };
    const res = await write(text, metadata);
    expect(res.status).toBe(200);
    const expected = Buffer.byteLength(text) + Buffer.byteLength(JSON.stringify(metadata));
    // Before, 1.2 kB of metadata moved the meter by nothing.
    expect((await storageUsed()) - before).toBe(expected);
    const deleted = await request(t.app)
      .delete(`/v1/memories/${res.body.memory_id}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(deleted.status).toBe(200);
    expect(await storageUsed()).toBe(before);
  });
});

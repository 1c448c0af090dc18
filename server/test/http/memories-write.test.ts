import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { listAuditRecords } from '../../src/db/queries/audit.js';
import { memories, memoryChunks, memoryLinks } from '../../src/db/schema/index.js';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import type { EmbeddingProvider } from '../../src/providers/embeddings/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeDb('POST /v1/memories', () => {
  let t: TestApp;
  let other: TestTenant;
  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
  });
  afterAll(async () => t?.close());

  const write = (
    body: object,
    tenant: TestTenant = t.tenant,
    headers: Record<string, string> = {},
  ) => request(t.app).post('/v1/memories').set('x-api-key', tenant.apiKey).set(headers).send(body);
  const read = (id: string, tenant: TestTenant = t.tenant) =>
    request(t.app).get(`/v1/memories/${id}`).set('x-api-key', tenant.apiKey);

  it('stores a memory, its chunk and embedding, and answers honestly', async () => {
    const res = await write({
      text: 'Alice prefers oat milk in her coffee',
      user_id: 'alice',
      metadata: { source: 'chat' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      memory_id: expect.stringMatching(UUID),
      stored: true,
      // The local extractor ran and found nothing to split out of one sentence.
      extraction: { status: 'run' },
      chunks: 1,
      intelligence: {
        canonical_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        confidence: 0.8,
        source_weight: 1,
        priority_score: 0.551,
        priority_tier: 'normal',
        auto_pinned: false,
        conflict_state: 'none',
      },
    });
    const stored = await read(res.body.memory_id);
    expect(stored.body).toMatchObject({
      text: 'Alice prefers oat milk in her coffee',
      owner_id: 'alice',
      owner_type: 'user',
      metadata: { source: 'chat' },
      memory_type: 'note',
      importance: 1,
      lifecycle_state: 'active',
      chunks: 1,
    });
    const [chunk] = await t.database.db
      .select()
      .from(memoryChunks)
      .where(eq(memoryChunks.memoryId, res.body.memory_id));
    expect(chunk).toMatchObject({
      chunkIndex: 0,
      ownerId: 'alice',
      embeddingProvider: 'local',
      // The default local embedder with the installed word-vector table (word-vectors.test.ts).
      embeddingDimension: 384,
      embeddingVersion: expect.stringMatching(/^local:mnemo-local-v3\.1:384:[0-9a-f]{8}$/),
    });
    expect(chunk?.embedding).toHaveLength(384);
  });

  it('writes without an owner to the default app owner, and says when extraction was turned off', async () => {
    const res = await write({ text: 'The support desk closes at 6pm on Fridays', extract: false });
    expect(res.body.extraction).toEqual({ status: 'skipped', reason: 'user_disabled' });
    const stored = await read(res.body.memory_id);
    expect(stored.body).toMatchObject({ owner_id: 'default', owner_type: 'app' });
  });

  it.each([
    [{}, 'text'],
    [{ text: '' }, 'text'],
    [{ text: 'x'.repeat(50_001) }, 'text'],
    [{ text: 42 }, 'text'],
    [{ text: 'a', userId: '' }, 'userId'],
    [{ text: 'a', user_id: '' }, 'user_id'],
    [{ text: 'a', owner_id: 7 }, 'owner_id'],
    [{ text: 'a', entity_id: '' }, 'entity_id'],
    [{ text: 'a', owner_type: 'agent' }, 'owner_type'],
    [{ text: 'a', entity_type: 'robot' }, 'entity_type'],
    [{ text: 'a', scope: 1 }, 'scope'],
    [{ text: 'a', namespace: false }, 'namespace'],
    [{ text: 'a', containerTag: {} }, 'containerTag'],
    [{ text: 'a', metadata: { a: [1] } }, 'metadata.a'],
    [{ text: 'a', metadata: 'x' }, 'metadata'],
    [{ text: 'a', memory_type: 'rumour' }, 'memory_type'],
    [{ text: 'a', importance: 0 }, 'importance'],
    [{ text: 'a', importance: 101 }, 'importance'],
    [{ text: 'a', chunk_profile: 'sparse' }, 'chunk_profile'],
    [{ text: 'a', extract: 'yes' }, 'extract'],
    [{ text: 'a', effective_at: 'last week' }, 'effective_at'],
    [{ text: 'a', replaces_memory_id: 'abc' }, 'replaces_memory_id'],
    [{ text: 'a', idempotency_key: 'seven77' }, 'idempotency_key'],
    [{ text: 'a', idempotency_key: 'k'.repeat(129) }, 'idempotency_key'],
  ])('refuses bad input #%# with 400 naming the field', async (body, field) => {
    const res = await write(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(Object.keys(res.body.error.details)).toContain(field);
  });

  it('refuses owner aliases that disagree, naming them', async () => {
    const res = await write({
      text: 'a',
      userId: 'u1',
      owner_id: 'u2',
      owner_type: 'user',
      entity_type: 'team',
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.error.details).sort()).toEqual(['entity_type', 'owner_id']);
  });

  it('chunks long text by profile and indexes every chunk', async () => {
    const sentences = Array.from(
      { length: 60 },
      (_, i) => `Sentence number ${i} talks about topic ${i % 7} in some detail.`,
    );
    const text = sentences.join(' ');
    const dense = await write({ text, user_id: 'chunky', chunk_profile: 'dense' });
    const document = await write({ text, user_id: 'chunky-doc', chunk_profile: 'document' });
    expect(dense.body.chunks).toBeGreaterThan(document.body.chunks);
    expect(document.body.chunks).toBeGreaterThan(1);
    const rows = await t.database.db
      .select()
      .from(memoryChunks)
      .where(eq(memoryChunks.memoryId, dense.body.memory_id));
    expect(rows).toHaveLength(dense.body.chunks);
    expect(rows.every((row) => row.embedding?.length === 384 && row.text.length <= 500)).toBe(true);
    expect((await read(dense.body.memory_id)).body.chunks).toBe(dense.body.chunks);
  });

  describe('idempotency', () => {
    it('replays the first response for the same key and payload without a second write', async () => {
      const body = {
        text: 'Bob is allergic to peanuts',
        user_id: 'bob',
        idempotency_key: 'bob-allergy-0001',
      };
      const first = await write(body);
      const second = await write({ ...body });
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      const rows = await t.database.db.select().from(memories).where(eq(memories.ownerId, 'bob'));
      expect(rows).toHaveLength(1);
      // Another workspace has its own keys.
      const elsewhere = await write(body, other);
      expect(elsewhere.body.memory_id).not.toBe(first.body.memory_id);
    });

    it('refuses the same key with a different payload with 409 CONFLICT', async () => {
      await write({
        text: 'Carol likes jazz',
        user_id: 'carol',
        idempotency_key: 'carol-key-0001',
      });
      const res = await write({
        text: 'Carol likes blues',
        user_id: 'carol',
        idempotency_key: 'carol-key-0001',
      });
      expect(res.status).toBe(409);
      expect(res.body.error).toEqual({
        code: 'CONFLICT',
        message: 'idempotency_key was already used with a different payload in this workspace',
        details: { idempotency_key: ['was already used with a different payload'] },
      });
    });

    it('writes once when 20 identical requests arrive at once', async () => {
      const body = {
        text: 'Dave renewed his subscription yesterday',
        user_id: 'dave',
        idempotency_key: 'dave-renewal-0001',
      };
      const responses = await Promise.all(Array.from({ length: 20 }, () => write(body)));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(new Set(responses.map((r) => r.body.memory_id)).size).toBe(1);
      const rows = await t.database.db.select().from(memories).where(eq(memories.ownerId, 'dave'));
      expect(rows).toHaveLength(1);
    });

    it('writes once when 20 identical requests without a key arrive at once', async () => {
      const body = { text: 'Erin works night shifts at the hospital', user_id: 'erin' };
      const responses = await Promise.all(Array.from({ length: 20 }, () => write(body)));
      expect(new Set(responses.map((r) => r.body.memory_id)).size).toBe(1);
      expect(responses.filter((r) => r.body.deduped).length).toBe(19);
      const rows = await t.database.db.select().from(memories).where(eq(memories.ownerId, 'erin'));
      expect(rows).toHaveLength(1);
    });

    it('records, under each key, what each of concurrent identical writes answered', async () => {
      const body = { text: 'Finn keeps bees on the roof of his building', user_id: 'finn' };
      const keys = Array.from({ length: 8 }, (_, i) => `finn-bees-${String(i).padStart(4, '0')}`);
      const first = await Promise.all(keys.map((key) => write({ ...body, idempotency_key: key })));
      expect(first.map((r) => r.status)).toEqual(Array(8).fill(200));
      const stored = first.filter((r) => !r.body.deduped);
      expect(stored).toHaveLength(1);
      expect(new Set(first.map((r) => r.body.memory_id))).toEqual(
        new Set([stored[0]!.body.memory_id]),
      );
      const replays = await Promise.all(
        keys.map((key) => write({ ...body, idempotency_key: key })),
      );
      expect(replays.map((r) => r.body)).toEqual(first.map((r) => r.body));
      const rows = await t.database.db.select().from(memories).where(eq(memories.ownerId, 'finn'));
      expect(rows).toHaveLength(1);
    });
  });

  it('stores text, owner, metadata and chunks with quotes, backslashes, braces and non-ASCII as sent', async () => {
    const text =
      'Gus wrote "hi" to O\'Brien: a \\ back\\slash, {braces}, [1,2], $1 and :name,\nthen ünïcödé — 🐝';
    const metadata = { note: 'a "quoted" \\ value, {x}', n: 2.5, ok: true, none: null };
    const owner = 'gus "the" \\ o\'neil';
    const res = await write({ text, user_id: owner, metadata, namespace: 'n,{1}' });
    expect(res.status).toBe(200);
    const got = await read(res.body.memory_id);
    expect(got.body).toMatchObject({ text, metadata, owner_id: owner, namespace: 'n,{1}' });
    const chunks = await t.database.db
      .select()
      .from(memoryChunks)
      .where(eq(memoryChunks.memoryId, res.body.memory_id));
    expect(chunks.map((chunk) => chunk.text)).toEqual([text]);
    expect(chunks[0]!.embedding).toHaveLength(384);
    const again = await write({ text, user_id: owner, metadata, namespace: 'n,{1}' });
    expect(again.body).toMatchObject({ memory_id: res.body.memory_id, deduped: true });
  });

  describe('dedupe', () => {
    it('returns the existing memory for an exact or near duplicate of the same owner and space', async () => {
      const original = await write({
        text: 'Frank drives a blue Volvo station wagon to work every single day',
        user_id: 'frank',
      });
      const exact = await write({
        text: 'frank drives a BLUE volvo station-wagon to work, every single day!',
        user_id: 'frank',
      });
      expect(exact.body).toEqual({
        memory_id: original.body.memory_id,
        stored: true,
        deduped: true,
        dedupe_kind: 'near',
        extraction: { status: 'skipped', reason: 'none' },
      });
      const near = await write({
        text: 'Frank drives a blue Volvo station wagon to work every single day now',
        user_id: 'frank',
      });
      expect(near.body).toMatchObject({
        memory_id: original.body.memory_id,
        deduped: true,
        dedupe_kind: 'near',
      });
    });

    it('returns a semantic duplicate when the embeddings are nearly the same but the words differ', async () => {
      const original = await write({ text: 'I love hiking in the mountains', user_id: 'gina' });
      const semantic = await write({ text: 'Loved hiking mountains!', user_id: 'gina' });
      expect(semantic.body).toMatchObject({
        memory_id: original.body.memory_id,
        deduped: true,
        dedupe_kind: 'semantic',
      });
    });

    it('does not dedupe across owners, spaces or workspaces', async () => {
      const text = 'Hank collects vintage fountain pens';
      const a = await write({ text, user_id: 'hank' });
      const b = await write({ text, user_id: 'hank', namespace: 'hobbies' });
      const c = await write({ text, user_id: 'hank', owner_type: 'team' });
      const d = await write({ text, user_id: 'ivan' });
      const e = await write({ text, user_id: 'hank' }, other);
      const ids = [a, b, c, d, e].map((r) => r.body.memory_id);
      expect(new Set(ids).size).toBe(5);
      expect([b, c, d, e].some((r) => r.body.deduped)).toBe(false);
    });
  });

  describe('supersession', () => {
    it('marks the replaced memory and reports it', async () => {
      const old = await write({ text: 'Jane lives in Paris', user_id: 'jane' });
      const res = await write({
        text: 'Jane moved to Berlin',
        user_id: 'jane',
        replaces_memory_id: old.body.memory_id,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        superseded_memory_id: old.body.memory_id,
        intelligence: { conflict_state: 'resolved' },
      });
      const replaced = await read(old.body.memory_id);
      expect(replaced.body).toMatchObject({
        lifecycle_state: 'replaced',
        replaced_by_memory_id: res.body.memory_id,
      });
      // Rewriting the same text on purpose is not a duplicate of what it replaces.
      const again = await write({
        text: 'Jane moved to Berlin',
        user_id: 'jane',
        replaces_memory_id: res.body.memory_id,
      });
      expect(again.body.deduped).toBeUndefined();
    });

    it('refuses to replace a memory of another owner or workspace', async () => {
      const kate = await write({ text: 'Kate is vegetarian', user_id: 'kate' });
      const otherOwner = await write({
        text: 'Leo is vegan',
        user_id: 'leo',
        replaces_memory_id: kate.body.memory_id,
      });
      expect(otherOwner.status).toBe(400);
      expect(otherOwner.body.error.details).toEqual({
        replaces_memory_id: ['is not a memory of this owner in this workspace'],
      });
      const otherWorkspace = await write(
        { text: 'Kate eats fish', user_id: 'kate', replaces_memory_id: kate.body.memory_id },
        other,
      );
      expect(otherWorkspace.status).toBe(400);
      expect((await read(kate.body.memory_id)).body.lifecycle_state).toBe('active');
    });
  });

  it('reports PII hints only when asked with x-safety-pii-scan: 1', async () => {
    const text = 'Reach Mia at mia.w@example.com or +44 20 7946 0958';
    const scanned = await write({ text, user_id: 'mia' }, t.tenant, { 'x-safety-pii-scan': '1' });
    expect(scanned.body.safety).toEqual({ pii_hints: ['email', 'phone'] });
    const plain = await write({ text: 'Mia prefers email over calls', user_id: 'mia' });
    expect(plain.body.safety).toBeUndefined();
    const clean = await write({ text: 'Mia likes sailing', user_id: 'mia' }, t.tenant, {
      'x-safety-pii-scan': '1',
    });
    expect(clean.body.safety).toBeUndefined();
  });

  it('writes the audit record of a write exactly once, inside the write', async () => {
    const res = await write({ text: 'Nora audits everything', user_id: 'nora' }, t.tenant, {
      'x-request-id': 'write-audit-1',
    });
    expect(res.status).toBe(200);
    await t.deps.audit.drain();
    const rows = await listAuditRecords(t.database.db, { requestId: 'write-audit-1' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      method: 'POST',
      path: '/v1/memories',
      status: 200,
      workspaceId: t.tenant.workspaceId,
    });
  });

  it('deletes a written memory with its chunks and links', async () => {
    const a = await write({ text: 'Omar plays chess on Tuesdays', user_id: 'omar' });
    const b = await write({ text: 'Omar coaches the school chess club', user_id: 'omar' });
    await t.database.db.insert(memoryLinks).values({
      workspaceId: t.tenant.workspaceId,
      sourceMemoryId: a.body.memory_id,
      targetMemoryId: b.body.memory_id,
    });
    const del = await request(t.app)
      .delete(`/v1/memories/${a.body.memory_id}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(del.body).toEqual({ id: a.body.memory_id, deleted: true, deleted_children: [] });
    expect(
      await t.database.db
        .select()
        .from(memoryChunks)
        .where(eq(memoryChunks.memoryId, a.body.memory_id)),
    ).toEqual([]);
    expect(
      await t.database.db
        .select()
        .from(memoryLinks)
        .where(eq(memoryLinks.sourceMemoryId, a.body.memory_id)),
    ).toEqual([]);
    expect((await read(b.body.memory_id)).status).toBe(200);
  });
});

/** Embeds like the local provider, except that one text makes the chunk insert fail. */
class PoisonedEmbeddings extends LocalEmbeddingProvider implements EmbeddingProvider {
  override async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) =>
      text.includes('poison') ? Array(256).fill(Number.NaN) : this.embedOne(text),
    );
  }
}

describeDb('POST /v1/memories atomicity', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({}, { embeddings: new PoisonedEmbeddings() });
  });
  afterAll(async () => t?.close());

  it('leaves nothing half-written when the transaction fails, and still audits the failure', async () => {
    const old = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ text: 'Pia lives in Rome', user_id: 'pia' });
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .set('x-request-id', 'poisoned-write-1')
      .send({
        text: 'Pia moved, poison pill',
        user_id: 'pia',
        replaces_memory_id: old.body.memory_id,
        idempotency_key: 'pia-poison-0001',
      });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL');
    const rows = await t.database.db.select().from(memories).where(eq(memories.ownerId, 'pia'));
    expect(rows.map((row) => [row.text, row.lifecycleState])).toEqual([
      ['Pia lives in Rome', 'active'],
    ]);
    const retry = await request(t.app).post('/v1/memories').set('x-api-key', t.tenant.apiKey).send({
      text: 'Pia moved to Milan',
      user_id: 'pia',
      replaces_memory_id: old.body.memory_id,
      idempotency_key: 'pia-poison-0001',
    });
    // The key was not consumed by the failed write; a different payload may still use it.
    expect(retry.status).toBe(200);
    await t.deps.audit.drain();
    const audit = await listAuditRecords(t.database.db, { requestId: 'poisoned-write-1' });
    expect(audit.map((row) => row.status)).toEqual([500]);
  });
});

import { sql as dsql, asc, eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executeRows } from '../../src/db/client.js';
import {
  eventOutbox,
  lifecycleHistoryFor,
  type DomainEvent,
  type EventOutbox,
} from '../../src/db/queries/events.js';
import { domainEvents, memories } from '../../src/db/schema/index.js';
import { runHygiene } from '../../src/jobs/hygiene.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { describeDb } from '../support/db.js';

// Three statements: the local extractor splits them into child memories of the written one.
const PARAGRAPH =
  'I moved to Berlin last month and started working at Siemens as an engineer. I love hiking and my favourite food is ramen. I need to renew my passport before June.';

describeDb('domain events: one outbox, written with the change', () => {
  let t: TestApp;
  let other: TestTenant;
  beforeAll(async () => {
    t = await createTestApp();
    other = await t.addTenant('other');
  }, 120_000);
  afterAll(async () => t?.close());

  const eventsOf = (workspaceId: string) =>
    t.database.db
      .select()
      .from(domainEvents)
      .where(eq(domainEvents.workspaceId, workspaceId))
      .orderBy(asc(domainEvents.seq));
  /** The events written since `seq` (exclusive), as kind/rule/memory triples. */
  const since = async (seq: number, tenant: TestTenant = t.tenant) =>
    (await eventsOf(tenant.workspaceId))
      .filter((event) => event.seq > seq)
      .map((event) => ({
        kind: event.kind,
        rule: event.rule,
        memoryId: event.memoryId,
        relatedMemoryId: event.relatedMemoryId,
      }));
  const lastSeq = async (tenant: TestTenant = t.tenant) =>
    (await eventsOf(tenant.workspaceId)).at(-1)?.seq ?? 0;
  const write = (body: object, tenant: TestTenant = t.tenant) =>
    request(t.app).post('/v1/memories').set('x-api-key', tenant.apiKey).send(body);

  it('a write emits one created; its exact repeat one deduped and nothing else', async () => {
    const start = await lastSeq();
    const first = await write({ text: 'Mara drinks oat milk', user_id: 'mara', extract: false });
    expect(first.status).toBe(200);
    const id = first.body.memory_id as string;
    expect(await since(start)).toEqual([
      { kind: 'created', rule: 'write', memoryId: id, relatedMemoryId: null },
    ]);

    const mark = await lastSeq();
    const again = await write({ text: 'Mara drinks oat milk', user_id: 'mara', extract: false });
    expect(again.body.deduped).toBe(true);
    expect(await since(mark)).toEqual([
      { kind: 'deduped', rule: 'exact', memoryId: id, relatedMemoryId: null },
    ]);
  });

  it('a replacement emits created and replaced; the memory shows only its history', async () => {
    const old = await write({ text: 'Mara lives in Lisbon', user_id: 'mara', extract: false });
    const mark = await lastSeq();
    const replacing = await write({
      text: 'Mara lives in Porto',
      user_id: 'mara',
      extract: false,
      replaces_memory_id: old.body.memory_id,
    });
    expect(replacing.status).toBe(200);
    const id = replacing.body.memory_id as string;
    expect(await since(mark)).toEqual([
      { kind: 'created', rule: 'write', memoryId: id, relatedMemoryId: null },
      {
        kind: 'replaced',
        rule: 'replaces_memory_id',
        memoryId: old.body.memory_id,
        relatedMemoryId: id,
      },
    ]);
    // The memory object's lifecycle history is what it was before the outbox: no `created`.
    const view = await request(t.app)
      .get(`/v1/memories/${old.body.memory_id}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(view.body.lifecycle_events).toEqual([
      expect.objectContaining({ event: 'replaced', rule: 'replaces_memory_id' }),
    ]);
    const fresh = await request(t.app).get(`/v1/memories/${id}`).set('x-api-key', t.tenant.apiKey);
    expect(fresh.body.lifecycle_events).toEqual([]);
  });

  it('a refining write emits one merged and no created', async () => {
    const first = await write({
      text: 'I have a golden retriever',
      user_id: 'max',
      extract: false,
    });
    const mark = await lastSeq();
    const refined = await write({
      text: 'I have a golden retriever named Max who loves swimming',
      user_id: 'max',
      extract: false,
    });
    expect(refined.body.trace?.memory_evolution).toBe('merged_into_existing');
    expect(await since(mark)).toEqual([
      { kind: 'merged', rule: 'evolution', memoryId: first.body.memory_id, relatedMemoryId: null },
    ]);
  });

  it('an extraction emits extracted per child; a delete emits deleted for each memory it removed', async () => {
    const mark = await lastSeq();
    const written = await write({ text: PARAGRAPH, user_id: 'lena' });
    expect(written.body.extraction.status).toBe('run');
    const parent = written.body.memory_id as string;
    const children = (
      await t.database.db
        .select({ id: memories.id })
        .from(memories)
        .where(eq(memories.parentMemoryId, parent))
    ).map((row) => row.id);
    expect(children.length).toBeGreaterThan(1);
    const made = await since(mark);
    expect(made.filter((e) => e.kind === 'created')).toEqual([
      { kind: 'created', rule: 'write', memoryId: parent, relatedMemoryId: null },
    ]);
    const extracted = made.filter((e) => e.kind === 'extracted');
    expect(extracted.map((e) => e.memoryId).sort()).toEqual([...children].sort());
    expect(new Set(extracted.map((e) => e.relatedMemoryId))).toEqual(new Set([parent]));
    expect(made).toHaveLength(1 + children.length);

    const beforeDelete = await lastSeq();
    const del = await request(t.app)
      .delete(`/v1/memories/${parent}`)
      .set('x-api-key', t.tenant.apiKey);
    expect(del.status).toBe(200);
    const deleted = await since(beforeDelete);
    expect(deleted[0]).toEqual({
      kind: 'deleted',
      rule: 'request',
      memoryId: parent,
      relatedMemoryId: null,
    });
    expect(deleted.slice(1).map((e) => [e.kind, e.rule, e.relatedMemoryId])).toEqual(
      children.map(() => ['deleted', 'parent_deleted', parent]),
    );
    expect(
      deleted
        .slice(1)
        .map((e) => e.memoryId)
        .sort(),
    ).toEqual([...children].sort());
    // The memory is gone, its events stay (no foreign key to it).
    expect((await eventsOf(t.tenant.workspaceId)).some((e) => e.memoryId === parent)).toBe(true);
  });

  it('a vote emits one feedback event naming the memories it moved', async () => {
    const a = await write({ text: 'Noor plays the cello', user_id: 'noor', extract: false });
    await write({ text: 'Noor plays cello in an orchestra', user_id: 'noor', extract: false });
    const search = await request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .set('x-request-id', 'events-vote-1')
      .send({ query: 'Noor cello', user_id: 'noor' });
    expect(search.status).toBe(200);
    const mark = await lastSeq();
    const vote = await request(t.app)
      .post('/v1/feedback')
      .set('x-api-key', t.tenant.apiKey)
      .send({ feedback: 'positive', request_id: 'events-vote-1' });
    expect(vote.status).toBe(200);
    const [event, ...rest] = (await eventsOf(t.tenant.workspaceId)).filter((e) => e.seq > mark);
    expect(rest).toEqual([]);
    expect(event).toMatchObject({ kind: 'feedback', rule: 'search', memoryId: null });
    expect(event?.details).toMatchObject({ request_id: 'events-vote-1', feedback: 'positive' });
    expect(event?.details.memory_ids).toContain(a.body.memory_id);
    expect(event?.details.memory_ids).toHaveLength(vote.body.applied);
  });

  it('expiry archives through the same outbox', async () => {
    const expiring = await write({
      text: 'Noor has a dentist appointment',
      user_id: 'noor',
      extract: false,
    });
    await t.database.db
      .update(memories)
      .set({ expiresAt: new Date(Date.now() - 60_000) })
      .where(eq(memories.id, expiring.body.memory_id));
    const mark = await lastSeq();
    await runHygiene(
      { db: t.database.db, events: eventOutbox },
      {
        dryRun: false,
        limit: 1000,
        workspaceId: t.tenant.workspaceId,
        nearThreshold: 0.99,
      },
    );
    expect((await since(mark)).filter((e) => e.memoryId === expiring.body.memory_id)).toEqual([
      {
        kind: 'archived',
        rule: 'expiry',
        memoryId: expiring.body.memory_id,
        relatedMemoryId: null,
      },
    ]);
  });

  it('expiry emits through the port it is handed: the rows are the ones it emitted', async () => {
    const expiresAt = new Date(Date.now() - 120_000);
    const expiring = await write({
      text: 'Lale returns the library books',
      user_id: 'lale',
      extract: false,
    });
    await t.database.db
      .update(memories)
      .set({ expiresAt })
      .where(eq(memories.id, expiring.body.memory_id));
    const mark = await lastSeq();
    const emitted: DomainEvent[] = [];
    const recording: EventOutbox = {
      emit: async (tx, events) => {
        emitted.push(...events);
        await eventOutbox.emit(tx, events);
      },
    };
    const report = await runHygiene(
      { db: t.database.db, events: recording },
      { dryRun: false, limit: 1000, workspaceId: t.tenant.workspaceId, nearThreshold: 0.99 },
    );
    expect(report.expired.memory_ids).toContain(expiring.body.memory_id);
    const archived = {
      kind: 'archived',
      workspaceId: t.tenant.workspaceId,
      memoryId: expiring.body.memory_id,
      rule: 'expiry',
      details: { expires_at: expiresAt.toISOString() },
    };
    expect(emitted.filter((e) => e.memoryId === expiring.body.memory_id)).toEqual([archived]);
    // Stored as emitted, and nothing hygiene changed went around the port.
    const rows = (await eventsOf(t.tenant.workspaceId)).filter((e) => e.seq > mark);
    expect(
      rows.map(({ kind, workspaceId, memoryId, rule, relatedMemoryId, details }) => ({
        kind,
        workspaceId,
        memoryId,
        rule,
        relatedMemoryId,
        details,
      })),
    ).toEqual(emitted.map((e) => ({ relatedMemoryId: null, details: {}, ...e })));
  });

  it('a write or delete that fails leaves no event', async () => {
    const kept = await write({ text: 'Ivo keeps bees', user_id: 'ivo', extract: false });
    await executeRows(
      t.database.db,
      dsql`create function refuse_for_test() returns trigger language plpgsql as $$
        begin raise exception 'refused by the test'; end $$`,
    );
    await executeRows(
      t.database.db,
      dsql`create trigger refuse_chunks before insert on memory_chunks
        for each row execute function refuse_for_test()`,
    );
    await executeRows(
      t.database.db,
      dsql`create trigger refuse_deletes before delete on memories
        for each row execute function refuse_for_test()`,
    );
    const mark = await lastSeq();
    try {
      const failed = await write({ text: 'Ivo sells honey', user_id: 'ivo', extract: false });
      expect(failed.status).toBeGreaterThanOrEqual(500);
      const refused = await request(t.app)
        .delete(`/v1/memories/${kept.body.memory_id}`)
        .set('x-api-key', t.tenant.apiKey);
      expect(refused.status).toBeGreaterThanOrEqual(500);
    } finally {
      await executeRows(t.database.db, dsql`drop trigger refuse_chunks on memory_chunks`);
      await executeRows(t.database.db, dsql`drop trigger refuse_deletes on memories`);
      await executeRows(t.database.db, dsql`drop function refuse_for_test()`);
    }
    expect(await since(mark)).toEqual([]);
    const stored = await t.database.db
      .select({ id: memories.id })
      .from(memories)
      .where(eq(memories.text, 'Ivo sells honey'));
    expect(stored).toEqual([]);
  });

  it("keeps each workspace's events to itself", async () => {
    const otherStart = await lastSeq(other);
    const mine = await write({ text: 'Sol collects stamps', user_id: 'sol', extract: false });
    expect(await since(otherStart, other)).toEqual([]);
    const theirs = await write(
      { text: 'Sol collects stamps', user_id: 'sol', extract: false },
      other,
    );
    // The same text in another workspace is no duplicate: its own `created`, in its own workspace.
    expect(await since(otherStart, other)).toEqual([
      { kind: 'created', rule: 'write', memoryId: theirs.body.memory_id, relatedMemoryId: null },
    ]);
    // Another workspace's history is never read for these memories.
    expect(
      await lifecycleHistoryFor(t.database.db, other.workspaceId, [mine.body.memory_id]),
    ).toEqual([]);
    const del = await request(t.app)
      .delete(`/v1/memories/${mine.body.memory_id}`)
      .set('x-api-key', other.apiKey);
    expect(del.status).toBe(404);
    expect(await since(otherStart, other)).toHaveLength(1);
  });
});

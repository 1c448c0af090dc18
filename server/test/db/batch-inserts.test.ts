import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertAuditRecords, listAuditRecords } from '../../src/db/queries/audit.js';
import { insertLearningSignals, latestSignalForRequest } from '../../src/db/queries/signals.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { learningSignals } from '../../src/db/schema/index.js';
import { createTestDatabase, describeDb, type TestDatabase } from '../support/db.js';

// Text that an array literal must escape: quotes, backslashes, commas, braces, NULL, non-ASCII.
const AWKWARD = [
  'plain',
  'say "hi", then {leave}',
  'back\\slash and \\"both\\"',
  'NULL',
  '',
  'café – 東京 ✓',
];

describeDb('batched audit rows and learning signals', () => {
  let db: TestDatabase;
  let workspaceId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    workspaceId = (await createWorkspace(db.db, { name: 'batches' })).id;
  });
  afterAll(async () => db?.close());

  it('writes each audit record of a batch as given, nulls and awkward text included', async () => {
    const records = AWKWARD.map((text, i) => ({
      requestId: `audit-${i}`,
      workspaceId: i % 2 === 0 ? workspaceId : null,
      method: 'POST',
      path: `/v1/search?q=${text}`,
      route: i === 3 ? null : '/v1/search',
      status: 200 + i,
      durationMs: i * 7,
      ip: i === 4 ? null : '127.0.0.1',
      userAgent: text,
      createdAt: new Date(Date.UTC(2026, 0, 1, 12, 0, i)),
    }));
    await insertAuditRecords(db.db, records);
    const rows = await listAuditRecords(db.db, { limit: 100 });
    const byRequest = new Map(rows.map((row) => [row.requestId, row]));
    for (const record of records)
      expect(byRequest.get(record.requestId)).toMatchObject({ ...record, apiKeyId: null });
  });

  it('writes each learning signal of a batch with its results as JSON', async () => {
    const signals = AWKWARD.map((text, i) => ({
      workspaceId,
      requestId: `signal-${i}`,
      route: 'search',
      ownerId: `owner ${text}`,
      ownerType: 'user',
      query: text,
      results: [{ memoryId: `m-${i}`, chunkId: `c-${text}`, rank: i + 1, score: 0.5 + i / 100 }],
      createdAt: new Date(Date.UTC(2026, 0, 2, 0, 0, i)),
    }));
    await insertLearningSignals(db.db, signals);
    for (const [i, signal] of signals.entries()) {
      const stored = await latestSignalForRequest(db.db, workspaceId, `signal-${i}`);
      expect(stored).toMatchObject({ ...signal, feedback: null });
    }
    const rows = await db.db
      .select()
      .from(learningSignals)
      .where(eq(learningSignals.workspaceId, workspaceId));
    expect(rows).toHaveLength(AWKWARD.length);
  });
});

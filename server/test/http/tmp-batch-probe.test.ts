import request from 'supertest';
import { it } from 'vitest';
import { batchConversation } from '../../../bench/lib/generator.js';
import * as mw from '../../src/services/memory-write/index.js';
import { createTestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

describeDb('probe', () => {
  it('counts', async () => {
    const t = await createTestApp();
    const spy = await import('vitest').then(({ vi }) => vi.spyOn(t.deps.embeddings, 'embed'));
    for (const i of [0, 1]) {
      const body = batchConversation(42, 1, i, 100);
      const started = performance.now();
      const res = await request(t.app).post('/v1/ingest').set('x-api-key', t.tenant.apiKey).send(body);
      const kinds: Record<string, number> = {};
      for (const turn of res.body.turns) {
        const w = turn.write;
        const k = w?.trace?.memory_evolution ?? (w?.superseded_memory_id ? 'superseded' : turn.status);
        kinds[k] = (kinds[k] ?? 0) + 1;
      }
      console.log('PROBE', i, (performance.now() - started).toFixed(0), 'ms', JSON.stringify(kinds), 'embed calls', spy.mock.calls.length);
    }
    void mw;
    await t.close();
  });
});

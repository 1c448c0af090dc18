import type { MemoryInsertPayload } from '@mnemo/contract';
import { describe, expect, it } from 'vitest';
import { COST_ESTIMATORS } from '../../src/operations/cost.js';
import { createExtractor } from '../../src/providers/extraction/index.js';
import type { Extractor } from '../../src/providers/extraction/index.js';
import { priceWork } from '../../src/services/ai-cost.js';
import { reserveWrite } from '../../src/services/memory-write/budget.js';
import { prepareWrite } from '../../src/services/memory-write/validate.js';
import { nothingToSettle, type QuotaGate, type UsageRequest } from '../../src/services/quota.js';

const prices = { embedMicroInrPerToken: 3, genMicroInrPerToken: 7 };
// Never called: only their kind decides what a write would ask of them.
const model = createExtractor({ provider: 'openai', baseUrl: 'http://127.0.0.1:9', model: 'm' });
const local = createExtractor({ provider: 'local' });

/** What the write pipeline reserves against the plan for this payload. */
async function reserved(
  extractor: Extractor | undefined,
  payload: MemoryInsertPayload,
): Promise<UsageRequest> {
  const requests: UsageRequest[] = [];
  const quota: QuotaGate = {
    reserve: async (request) => {
      requests.push(request);
      return nothingToSettle;
    },
  };
  const write = prepareWrite({
    workspaceId: '00000000-0000-4000-8000-000000000001',
    payload,
    piiScan: false,
    audit: {
      requestId: 'r',
      workspaceId: '00000000-0000-4000-8000-000000000001',
      apiKeyId: null,
      method: 'POST',
      path: '/v1/memories',
      route: '/v1/memories',
      ip: null,
      userAgent: null,
      startedAt: 0n,
    },
  });
  await reserveWrite({ quota, extractor }, write);
  expect(requests).toHaveLength(1);
  return requests[0]!;
}

const LONG = 'Ana moved to Lisbon in May and works as a nurse at the city hospital. '.repeat(60);

describe('a write’s AI cost is counted once', () => {
  const cases: Array<[string, Extractor | undefined, MemoryInsertPayload]> = [
    ['short text, model extraction', model, { text: 'I prefer tea over coffee.' }],
    ['many chunks, model extraction', model, { text: LONG }],
    ['many chunks, dense profile', model, { text: LONG, chunk_profile: 'dense' }],
    ['extraction turned off', model, { text: LONG, extract: false }],
    ['too unimportant to extract', model, { text: LONG, importance: 0.05 }],
    ['local extraction is free', local, { text: LONG }],
    ['extraction off on the server', undefined, { text: LONG }],
  ];

  it.each(cases)(
    '%s: the cost limits price what the plan reserves',
    async (_, extractor, payload) => {
      const amounts = await reserved(extractor, payload);
      const estimate = COST_ESTIMATORS.write(payload, { prices, extractor });
      expect(estimate).toBe(priceWork(amounts, prices));
      expect(estimate).toBeGreaterThan(0);
    },
  );

  it('the estimate follows the extraction decision of the write itself', async () => {
    const withModel = COST_ESTIMATORS.write({ text: LONG }, { prices, extractor: model });
    const unimportant = COST_ESTIMATORS.write(
      { text: LONG, importance: 0.05 },
      { prices, extractor: model },
    );
    const off = COST_ESTIMATORS.write({ text: LONG }, { prices, extractor: undefined });
    expect(unimportant).toBe(off);
    expect(withModel).toBeGreaterThan(off);
  });
});

import { initContract } from '@ts-rest/core';
import { MemoryHygieneQuery, MemoryHygieneReport } from '../schemas/admin.js';
import { ADMIN } from './auth.js';

const c = initContract();

/** Operator routes: outside the published contract, behind the admin token. */
export const adminContract = c.router(
  {
    runMemoryHygiene: {
      method: 'POST',
      path: '/memory-hygiene',
      query: MemoryHygieneQuery,
      body: c.noBody(),
      responses: { 200: MemoryHygieneReport },
      metadata: ADMIN,
      summary: 'Archive expired memories and supersede near duplicates (operator route)',
    },
  },
  { pathPrefix: '/admin' },
);

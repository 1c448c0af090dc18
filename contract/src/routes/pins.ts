import { initContract } from '@ts-rest/core';
import { GetPinsQuery, PinsResponse, UpdatePinsPayload } from '../schemas/pins.js';
import { ErrorEnvelope } from '../schemas/common.js';
import { TENANT_OPERATOR } from './auth.js';

const c = initContract();

/**
 * Profile pins (operator routes of the spec, outside the published contract): an owner's pinned
 * memories come first in its context. See docs/links-history-pins.md.
 */
export const pinsContract = c.router(
  {
    updatePins: {
      method: 'PATCH',
      path: '/profile/pins',
      body: UpdatePinsPayload,
      responses: { 200: PinsResponse, 409: ErrorEnvelope },
      metadata: TENANT_OPERATOR,
      summary: 'Pin and unpin memories of an owner; returns the owner’s pins',
    },
    getPins: {
      method: 'GET',
      path: '/profile/pins',
      query: GetPinsQuery,
      responses: { 200: PinsResponse },
      metadata: TENANT_OPERATOR,
      summary: 'The pinned memories of an owner',
    },
  },
  { pathPrefix: '/v1' },
);

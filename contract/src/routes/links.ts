import { initContract } from '@ts-rest/core';
import {
  CreateLinkPayload,
  CreateLinkResponse,
  DeleteLinkQuery,
  DeleteLinkResponse,
  ListLinksResponse,
} from '../schemas/links.js';
import { MemoryIdParams } from '../schemas/memories.js';
import { ErrorEnvelope } from '../schemas/common.js';
import { TENANT_OPERATOR } from './auth.js';

const c = initContract();

/**
 * Typed edges between two memories of one owner (operator routes of the spec, outside the
 * published contract). Context follows them in either direction. See docs/links-history-pins.md.
 */
export const linksContract = c.router(
  {
    createLink: {
      method: 'POST',
      path: '/memories/:id/links',
      pathParams: MemoryIdParams,
      body: CreateLinkPayload,
      responses: { 200: CreateLinkResponse, 409: ErrorEnvelope },
      metadata: TENANT_OPERATOR,
      summary: 'Link this memory to another (idempotent: an existing edge is returned as is)',
    },
    listLinks: {
      method: 'GET',
      path: '/memories/:id/links',
      pathParams: MemoryIdParams,
      responses: { 200: ListLinksResponse },
      metadata: TENANT_OPERATOR,
      summary: 'Links with this memory at either end',
    },
    deleteLink: {
      method: 'DELETE',
      path: '/memories/:id/links',
      pathParams: MemoryIdParams,
      query: DeleteLinkQuery,
      body: c.noBody(),
      responses: { 200: DeleteLinkResponse },
      metadata: TENANT_OPERATOR,
      summary: 'Delete the links from this memory to a target (one relation, or all)',
    },
  },
  { pathPrefix: '/v1' },
);

import { initContract } from '@ts-rest/core';
import {
  ApiKeyIdParams,
  CreateOperatorApiKeyRequest,
  ListOperatorApiKeysQuery,
  MintedApiKey,
  OperatorApiKeyList,
  RevokedOperatorApiKey,
} from '../schemas/api-keys.js';
import { ADMIN } from './auth.js';

const c = initContract();

/**
 * API keys of any workspace, behind the admin token (operator routes). Keys minted here start
 * on the introductory rate: 15 requests per minute for their first 48 hours.
 */
export const apiKeysContract = c.router(
  {
    createApiKey: {
      method: 'POST',
      path: '/api-keys',
      body: CreateOperatorApiKeyRequest,
      responses: { 201: MintedApiKey },
      metadata: ADMIN,
      summary: 'Mint an API key for a workspace; the plaintext is returned once (operator route)',
    },
    listApiKeys: {
      method: 'GET',
      path: '/api-keys',
      query: ListOperatorApiKeysQuery,
      responses: { 200: OperatorApiKeyList },
      metadata: ADMIN,
      summary: "A workspace's API keys, without key material (operator route)",
    },
    revokeApiKey: {
      method: 'POST',
      path: '/api-keys/:id/revoke',
      pathParams: ApiKeyIdParams,
      body: c.noBody(),
      responses: { 200: RevokedOperatorApiKey },
      metadata: ADMIN,
      summary: 'Revoke an API key; revoking it again changes nothing (operator route)',
    },
  },
  { pathPrefix: '/v1' },
);

import { initContract } from '@ts-rest/core';
import { CreatedTenantWorkspace, CreateTenantWorkspaceRequest } from '../schemas/api-keys.js';
import { ADMIN_API_KEY } from './auth.js';

const c = initContract();

/** Workspace creation by an admin-scoped API key (operator route). See docs/operator.md. */
export const workspacesContract = c.router({
  createWorkspace: {
    method: 'POST',
    path: '/v1/workspaces',
    body: CreateTenantWorkspaceRequest,
    responses: { 201: CreatedTenantWorkspace },
    metadata: ADMIN_API_KEY,
    summary: 'Create a workspace and its first API key (admin-scoped API key; operator route)',
  },
});

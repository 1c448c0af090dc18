import { initContract } from '@ts-rest/core';
import {
  ApiKeyList,
  ApiKeyListQuery,
  BootstrapData,
  BootstrapRequest,
  CreateApiKeyRequest,
  CreatedApiKey,
  CreatedWorkspace,
  CreateWorkspaceRequest,
  DashboardError,
  dashboardOk,
  LogoutResponse,
  OverviewStats,
  RevokeApiKeyRequest,
  RevokedApiKey,
  SessionData,
  SessionRequest,
  WorkspaceList,
} from '../schemas/dashboard.js';
import { DASHBOARD_SESSION, DASHBOARD_TOKEN } from './auth.js';

const c = initContract();

/** Every failure of a dashboard route, in the dashboard envelope (overrides the tenant one). */
const errors = {
  400: DashboardError,
  401: DashboardError,
  403: DashboardError,
  404: DashboardError,
  413: DashboardError,
  429: DashboardError,
  500: DashboardError,
  503: DashboardError,
} as const;

/**
 * The browser console's API (the spec's Dashboard table). Bootstrap and session take an
 * identity-provider JWT in the body; the rest need the `svc_dash_session` cookie, and mutations
 * also `x-csrf-token`. Bodies are strict: unknown properties are a 400.
 */
export const dashboardContract = c.router(
  {
    bootstrapDashboard: {
      method: 'POST',
      path: '/bootstrap',
      body: BootstrapRequest,
      responses: { 200: dashboardOk(BootstrapData), ...errors },
      metadata: DASHBOARD_TOKEN,
      summary: "Return the signed-in user's workspace, creating one on first sign-in",
    },
    createDashboardSession: {
      method: 'POST',
      path: '/session',
      body: SessionRequest,
      responses: { 200: dashboardOk(SessionData), ...errors },
      metadata: DASHBOARD_TOKEN,
      summary: 'Verify the access token, store a session and set its HttpOnly cookie',
    },
    logoutDashboard: {
      method: 'POST',
      path: '/logout',
      body: c.noBody(),
      responses: { 200: LogoutResponse, ...errors },
      metadata: DASHBOARD_SESSION,
      summary: 'Delete the session and clear its cookie (CSRF)',
    },
    getOverviewStats: {
      method: 'GET',
      path: '/overview-stats',
      responses: { 200: dashboardOk(OverviewStats), ...errors },
      metadata: DASHBOARD_SESSION,
      summary: 'Console overview statistics of the session workspace',
    },
    listDashboardWorkspaces: {
      method: 'GET',
      path: '/workspaces',
      responses: { 200: dashboardOk(WorkspaceList), ...errors },
      metadata: DASHBOARD_SESSION,
      summary: 'Workspaces of the signed-in user, with their role',
    },
    createDashboardWorkspace: {
      method: 'POST',
      path: '/workspaces',
      body: CreateWorkspaceRequest,
      responses: { 200: dashboardOk(CreatedWorkspace), ...errors },
      metadata: DASHBOARD_SESSION,
      summary: 'Create a workspace owned by the signed-in user (CSRF)',
    },
    listDashboardApiKeys: {
      method: 'GET',
      path: '/api-keys',
      query: ApiKeyListQuery,
      responses: { 200: dashboardOk(ApiKeyList), ...errors },
      metadata: DASHBOARD_SESSION,
      summary: "API keys of the session's workspace",
    },
    createDashboardApiKey: {
      method: 'POST',
      path: '/api-keys',
      body: CreateApiKeyRequest,
      responses: { 200: dashboardOk(CreatedApiKey), ...errors },
      metadata: DASHBOARD_SESSION,
      summary: 'Mint an API key; the plaintext is returned once (CSRF)',
    },
    revokeDashboardApiKey: {
      method: 'POST',
      path: '/api-keys/revoke',
      body: RevokeApiKeyRequest,
      responses: { 200: dashboardOk(RevokedApiKey), ...errors },
      metadata: DASHBOARD_SESSION,
      summary: "Revoke one of the session workspace's API keys (CSRF)",
    },
  },
  { pathPrefix: '/v1/dashboard' },
);

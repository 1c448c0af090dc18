import { initContract } from '@ts-rest/core';
import { ConnectorSettings, ConnectorSettingsPatch } from '../schemas/connectors.js';
import { TENANT_OPERATOR } from './auth.js';

const c = initContract();

/** Per-workspace settings of the connectors that feed it (operator routes, K or S). */
export const connectorsContract = c.router(
  {
    getConnectorSettings: {
      method: 'GET',
      path: '/connectors/settings',
      responses: { 200: ConnectorSettings },
      metadata: TENANT_OPERATOR,
      summary: "The workspace's connector settings (defaults until changed)",
    },
    updateConnectorSettings: {
      method: 'PATCH',
      path: '/connectors/settings',
      body: ConnectorSettingsPatch,
      responses: { 200: ConnectorSettings },
      metadata: TENANT_OPERATOR,
      summary: 'Change some connector settings; returns them all',
    },
  },
  { pathPrefix: '/v1' },
);

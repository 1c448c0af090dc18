import { contract, type ConnectorSettings, type ConnectorSettingsPatch } from '@mnemo/contract';
import { connectorSettings, patchConnectorSettings } from '../services/connectors.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** GET the workspace's connector settings (tenant operator route). */
export const getConnectorSettings = defineOperation<
  undefined,
  ConnectorSettings,
  Pick<OperationContext, 'writer'>
>('getConnectorSettings', contract.connectors.getConnectorSettings, async (ctx, { caller }) => ({
  output: await connectorSettings(ctx.writer, caller.workspaceId),
}));

/** PATCH the workspace's connector settings, kind by kind. */
export const updateConnectorSettings = defineOperation<
  ConnectorSettingsPatch,
  ConnectorSettings,
  Pick<OperationContext, 'writer'>
>(
  'updateConnectorSettings',
  contract.connectors.updateConnectorSettings,
  async (ctx, { caller, input }) => ({
    output: await patchConnectorSettings(ctx.writer, caller.workspaceId, input),
  }),
);

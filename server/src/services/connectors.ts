import {
  CONNECTOR_KINDS,
  ConnectorKindSettings,
  type ConnectorSettings,
  type ConnectorSettingsPatch,
  DEFAULT_CONNECTOR_SETTINGS,
} from '@mnemo/contract';
import type { Database } from '../db/client.js';
import { getConnectorSettings, updateConnectorSettings } from '../db/queries/connectors.js';

type KindSettings = Pick<ConnectorSettings, (typeof CONNECTOR_KINDS)[number]>;

/**
 * The stored settings over the defaults, kind by kind. A stored kind that no longer validates
 * (an older shape) falls back to the defaults rather than failing the read.
 */
function withDefaults(stored: unknown): KindSettings {
  const record = (stored ?? {}) as Record<string, unknown>;
  const result = {} as KindSettings;
  for (const kind of CONNECTOR_KINDS) {
    const parsed = ConnectorKindSettings.safeParse({
      ...DEFAULT_CONNECTOR_SETTINGS[kind],
      ...(record[kind] as object | undefined),
    });
    result[kind] = parsed.success ? parsed.data : DEFAULT_CONNECTOR_SETTINGS[kind];
  }
  return result;
}

export async function connectorSettings(
  db: Database,
  workspaceId: string,
): Promise<ConnectorSettings> {
  const row = await getConnectorSettings(db, workspaceId);
  return { ...withDefaults(row?.settings), updated_at: row?.updatedAt.toISOString() ?? null };
}

/**
 * Merges the patch field by field into each kind (arrays and `default_metadata` are replaced as
 * a whole) and stores the result atomically; returns every setting.
 */
export async function patchConnectorSettings(
  db: Database,
  workspaceId: string,
  patch: ConnectorSettingsPatch,
): Promise<ConnectorSettings> {
  const row = await updateConnectorSettings(db, workspaceId, (current) => {
    const merged = withDefaults(current);
    for (const kind of CONNECTOR_KINDS) {
      const changes = patch[kind];
      if (changes) merged[kind] = { ...merged[kind], ...changes };
    }
    return merged;
  });
  return { ...withDefaults(row.settings), updated_at: row.updatedAt.toISOString() };
}

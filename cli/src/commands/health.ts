import { Command } from 'commander';
import type { UsageToday, VersionedHealthResponse } from '@mnemo/client';
import type { App } from '../context.js';
import { keyValues, table } from '../output.js';
import type { Bind } from './memories.js';

function formatHealth(health: VersionedHealthResponse): string {
  return keyValues([
    ['status', health.status],
    ['version', health.version],
    ['build_version', health.build_version],
    ['stage', health.stage],
    ['git_sha', health.git_sha],
    ['embedding_model', health.embedding_model],
  ]);
}

function formatUsage(usage: UsageToday): string {
  const limits = usage.limits ?? usage.caps;
  const rows = (['writes', 'reads', 'embeds'] as const).map((resource) => [
    resource,
    String(usage[resource]),
    limits ? String(limits[resource]) : '-',
  ]);
  const alerts = (usage.cap_alerts ?? []).map(
    (alert) =>
      `${alert.severity}: ${alert.resource} at ${Math.round(alert.ratio * 100)}% (${alert.used}/${alert.cap})`,
  );
  return [
    keyValues([
      ['plan', usage.plan],
      ['day', usage.day],
      ['mode', usage.operational_mode],
    ]),
    '',
    table([['RESOURCE', 'USED', 'LIMIT'], ...rows]),
    ...(alerts.length > 0 ? ['', ...alerts] : []),
  ].join('\n');
}

/** `mnemo health`: is the service up, which version, which embedding model. */
export function healthCommand(bind: Bind): Command {
  return new Command('health').description('Check that the service is up').action(
    bind(async ({ client, output }: App) => {
      output.result(await client.health(), formatHealth);
    }),
  );
}

/** `mnemo usage`: today's usage against the plan's limits (GET /v1/usage/today). */
export function usageCommand(bind: Bind): Command {
  return new Command('usage').description("Today's usage against the plan's limits").action(
    bind(async ({ client, output }: App) => {
      output.result(await client.usage.today(), formatUsage);
    }),
  );
}

import { spawnSync } from 'node:child_process';
import type { Cluster } from '../../../scripts/cluster.js';

/** A REST call with the cluster's API key; `base` is the balancer or one instance. */
export async function call(
  cluster: Cluster,
  method: string,
  path: string,
  { base = cluster.state.balancer.url, body, headers = {} }: CallOptions = {},
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${cluster.state.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

interface CallOptions {
  base?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One SQL statement on a cluster database (psql as the superuser), its first value. */
export function psql(port: number, statement: string): string {
  const result = spawnSync(
    '/usr/lib/postgresql/15/bin/psql',
    ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'mnemo', '-Atc', statement],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`psql failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** The completed requests an instance logged for a path (its JSON log lines). */
export function requestsLogged(cluster: Cluster, index: number, path: string): number {
  const log = spawnSync('cat', [`${cluster.state.dir}/mnemo-${index}.log`], { encoding: 'utf8' });
  return log.stdout
    .split('\n')
    .filter(
      (line) => line.includes('"msg":"request completed"') && line.includes(`"path":"${path}"`),
    ).length;
}

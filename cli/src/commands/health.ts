import type { VersionedHealthResponse } from '@mnemo/client';
import type { Command } from '../command.js';
import { keyValues } from '../output.js';

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

/** `mnemo health`: is the service up, which version, which embedding model. */
export const health: Command = {
  words: ['health'],
  summary: 'Check that the service is up',
  async action({ client, output }) {
    output.result(await client.health(), formatHealth);
  },
};

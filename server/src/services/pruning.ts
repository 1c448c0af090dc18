import type { PruningMetrics } from '@mnemo/contract';
import type { Database } from '../db/client.js';
import { pruningCounts } from '../db/queries/pruning.js';

/** Memory, duplicate and chunk counts of one workspace (cheap aggregates, no vector work). */
export async function pruningMetrics(db: Database, workspaceId: string): Promise<PruningMetrics> {
  const counts = await pruningCounts(db, workspaceId);
  const state = (name: string) => counts.states[name] ?? 0;
  return {
    workspace_id: workspaceId,
    memories: {
      total: Object.values(counts.states).reduce((sum, n) => sum + n, 0),
      active: state('active'),
      replaced: state('replaced'),
      archived: state('archived'),
      expired_pending: counts.expiredPending,
    },
    duplicates: { exact_active: counts.exactActive, superseded: counts.superseded },
    chunks: {
      total: counts.chunks.total,
      active: counts.chunks.active,
      per_memory_avg: counts.chunks.avg,
      per_memory_max: counts.chunks.max,
      orphaned: counts.chunks.orphaned,
    },
    generated_at: new Date().toISOString(),
  };
}

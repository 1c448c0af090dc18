import { and, eq, lt, sql } from 'drizzle-orm';
import { type Reader, executeRows } from '../client.js';
import { memories } from '../schema/index.js';
import { insertEventsSelected, type DomainEvent } from './events.js';
import type { Queryable } from './statement.js';

type ArchivedEvent = Extract<DomainEvent, { kind: 'archived' }>;
const ARCHIVED: ArchivedEvent['kind'] = 'archived';
const RETENTION: ArchivedEvent['rule'] = 'retention';

/** Where one workspace's retention ends, and the plan that set it (recorded on each event). */
export interface RetentionPolicy {
  workspaceId: string;
  /** Live memories created before this are past retention. */
  cutoff: Date;
  plan: string;
  retentionDays: number;
}

/**
 * Workspaces holding a live memory created before `before` (the shortest retention of any plan),
 * optionally one workspace only: the ones a retention run needs to resolve a plan for.
 */
export async function workspacesWithMemoriesBefore(
  db: Reader,
  { before, workspaceId }: { before: Date; workspaceId?: string },
): Promise<string[]> {
  const rows = await db
    .selectDistinct({ workspaceId: memories.workspaceId })
    .from(memories)
    .where(
      and(
        eq(memories.lifecycleState, 'active'),
        lt(memories.createdAt, before),
        workspaceId ? eq(memories.workspaceId, workspaceId) : undefined,
      ),
    );
  return rows.map((row) => row.workspaceId);
}

export interface RetentionBatchRow {
  workspace_id: string;
  /** Picked up: live and past its workspace's cutoff. */
  examined: number;
  /** Archived by this statement (0 on a dry run). */
  archived: number;
}

/**
 * One retention batch, in one statement: the oldest `limit` live memories past their workspace's
 * cutoff (rows being changed right now are skipped, SKIP LOCKED, and left to the next run) are
 * set `archived` with a lifecycle event saying why (rule `retention`, plan, days, cutoff); with
 * `dryRun` they are only counted. Only `active` rows are touched, so a second run over the same
 * rows archives nothing. Returns counts per workspace.
 */
export async function archivePastRetention(
  db: Queryable,
  {
    policies,
    limit,
    now,
    dryRun,
  }: { policies: RetentionPolicy[]; limit: number; now: Date; dryRun: boolean },
): Promise<RetentionBatchRow[]> {
  if (policies.length === 0) return [];
  const policyJson = JSON.stringify(
    policies.map((p) => ({
      workspace_id: p.workspaceId,
      cutoff: p.cutoff.toISOString(),
      plan: p.plan,
      retention_days: p.retentionDays,
    })),
  );
  const at = now.toISOString();
  const due = sql`
with policy as (
  select * from jsonb_to_recordset(${policyJson}::jsonb)
    as p(workspace_id uuid, cutoff timestamptz, plan text, retention_days int)
),
due as (
  select m.id, m.workspace_id, m.created_at, p.plan, p.retention_days, p.cutoff
  from policy p
  join memories m on m.workspace_id = p.workspace_id
  where m.lifecycle_state = 'active' and m.created_at < p.cutoff
  order by m.created_at, m.id
  limit ${limit}
  for update of m skip locked
)`;
  const rows = dryRun
    ? await executeRows<{ workspace_id: string; examined: number; archived: number }>(
        db,
        sql`${due}
select workspace_id::text, count(*)::int as examined, 0 as archived
from due group by workspace_id`,
      )
    : await executeRows<{ workspace_id: string; examined: number; archived: number }>(
        db,
        sql`${due},
archived as (
  update memories m
  set lifecycle_state = 'archived', archive_rule = 'retention', updated_at = ${at}::timestamptz
  from due
  where m.id = due.id and m.lifecycle_state = 'active'
  returning m.id, m.workspace_id
),
events as (
  ${insertEventsSelected(sql`select a.workspace_id, ${ARCHIVED}::text, a.id, ${RETENTION}::text, null::uuid,
    jsonb_build_object(
      'plan', d.plan,
      'retention_days', d.retention_days,
      'cutoff', to_char(d.cutoff at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'created_at', to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    ),
    ${at}::timestamptz
  from archived a join due d on d.id = a.id`)}
  returning 1
)
select d.workspace_id::text, count(*)::int as examined, count(a.id)::int as archived
from due d left join archived a on a.id = d.id
group by d.workspace_id`,
      );
  return rows.map((row) => ({
    workspace_id: row.workspace_id,
    examined: Number(row.examined),
    archived: Number(row.archived),
  }));
}

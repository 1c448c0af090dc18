import { Command, Option } from 'commander';
import type { AuditLogPage, AuditLogParams } from '@mnemo/client';
import type { App } from '../context.js';
import { table } from '../output.js';
import { choice, orList, positiveInt } from '../parse.js';
import type { Bind } from './memories.js';
import { defined } from './shared.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

interface AuditFlags {
  from?: string;
  to?: string;
  route?: string;
  method?: (typeof METHODS)[number];
  status?: string;
  page?: number;
  pageSize?: number;
}

function formatAudit(page: AuditLogPage): string {
  if (page.results.length === 0) return 'no audit records match';
  const rows = page.results.map((row) => [
    row.created_at,
    String(row.status),
    row.method,
    row.route ?? row.path,
    `${row.duration_ms} ms`,
    row.request_id,
  ]);
  const footer = `${page.total} in total${page.has_more ? `; next: --page ${page.page + 1}` : ''}`;
  return `${table([['TIME', 'STATUS', 'METHOD', 'ROUTE', 'DURATION', 'REQUEST ID'], ...rows])}\n\n${footer}`;
}

/** `mnemo audit [--from --to --route --method --status --page --page-size]` (GET /v1/audit/log). */
export function auditCommand(bind: Bind): Command {
  return new Command('audit')
    .description("The workspace's audit log, newest first (operator route)")
    .option('--from <iso>', 'only requests at or after this ISO 8601 time')
    .option('--to <iso>', 'only requests before this ISO 8601 time')
    .option('--route <pattern>', 'only this route pattern, e.g. /v1/memories/:id')
    .addOption(new Option('--method <method>', orList(METHODS)).argParser(choice(METHODS)))
    .option('--status <code>', 'only this status code (404) or class (4xx)')
    .option('--page <n>', 'page, from 1', positiveInt)
    .option('--page-size <n>', 'records per page, 1 to 200', positiveInt)
    .action(
      bind(async ({ client, output }: App, flags: AuditFlags) => {
        const params: AuditLogParams = defined({
          from: flags.from,
          to: flags.to,
          route: flags.route,
          method: flags.method,
          status: flags.status,
          page: flags.page,
          page_size: flags.pageSize,
        });
        output.result(await client.audit.log(params), formatAudit);
      }),
    );
}

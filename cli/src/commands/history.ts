import { Command } from 'commander';
import type { ReplaySearchResponse, SearchHistoryResponse } from '@mnemo/client';
import type { App } from '../context.js';
import { clip, table } from '../output.js';
import { positiveInt } from '../parse.js';
import type { Bind } from './memories.js';
import { defined, ownerFrom, ownerOptions, type OwnerFlags } from './shared.js';

interface HistoryFlags extends OwnerFlags {
  page?: number;
  pageSize?: number;
  since?: string;
}

function formatHistory(result: SearchHistoryResponse): string {
  if (result.results.length === 0)
    return 'no saved searches (search with x-save-history: 1 to save one)';
  const rows = result.results.map((saved) => [
    saved.created_at,
    saved.query_id,
    `${saved.owner_type}:${saved.owner_id}`,
    clip(saved.query, 60),
  ]);
  const footer = `${result.total} in total${result.has_more ? `; next: --page ${result.page + 1}` : ''}`;
  return `${table([['SAVED', 'QUERY ID', 'OWNER', 'QUERY'], ...rows])}\n\n${footer}`;
}

function formatReplay(result: ReplaySearchResponse): string {
  if (result.results.length === 0) return `query ${result.query_id}: no matching memories`;
  const offset = (result.page - 1) * (result.page_size ?? result.results.length);
  const rows = result.results.map((hit, index) => [
    String(offset + index + 1),
    hit.score.toFixed(3),
    hit.memory_id,
    clip(hit.text, 70),
  ]);
  return `${table([['#', 'SCORE', 'MEMORY', 'TEXT'], ...rows])}\n\n${result.total} in total (replay of ${result.query_id})`;
}

/** `mnemo history [--page n]` and `mnemo history replay <query-id>`. */
export function historyCommand(bind: Bind): Command {
  const replay = new Command('replay')
    .description('Run a saved search again (metered like a search)')
    .argument('<query-id>', 'the query id that mnemo history printed')
    .action(
      bind(async ({ client, output }: App, queryId: string) => {
        output.result(await client.history.replay(queryId), formatReplay);
      }),
    );
  return ownerOptions(new Command('history'))
    .description('Saved searches, newest first (operator route)')
    .option('--page <n>', 'page, from 1', positiveInt)
    .option('--page-size <n>', 'saved searches per page, 1 to 100', positiveInt)
    .option('--since <iso>', 'only searches saved at or after this ISO 8601 time')
    .action(
      bind(async ({ client, output }: App, flags: HistoryFlags) => {
        const params = defined({
          ...ownerFrom(flags),
          page: flags.page,
          page_size: flags.pageSize,
          since: flags.since,
        });
        output.result(await client.history.list(params), formatHistory);
      }),
    )
    .addCommand(replay);
}

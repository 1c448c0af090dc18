import { Command, Option } from 'commander';
import {
  FEEDBACK_VALUES,
  LIMITS,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
  type ContextResult,
  type FeedbackResponse,
  type FeedbackValue,
  type Metadata,
  type MemoryType,
  type RetrievalProfile,
  type SearchMode,
  type SearchParams,
  type SearchResult,
} from '@mnemo/client';
import type { App } from '../context.js';
import { clip, table } from '../output.js';
import { choice, memoryType, metadata, number, orList, positiveInt, range } from '../parse.js';
import type { Bind } from './memories.js';
import { defined, ownerFrom, ownerOptions, type OwnerFlags } from './shared.js';

interface SearchFlags extends OwnerFlags {
  topK?: number;
  page?: number;
  pageSize?: number;
  mode?: SearchMode;
  minScore?: number;
  profile?: RetrievalProfile;
  type?: MemoryType;
  metadata?: Metadata;
  scope?: string;
  namespace?: string;
  containerTag?: string;
}

function searchOptions(command: Command): Command {
  return ownerOptions(command)
    .argument('<query>', 'what to look for, in natural language')
    .option('--top-k <n>', `how many results, ${range(LIMITS.topK)}`, positiveInt)
    .option('--page <n>', 'page of results, from 1', positiveInt)
    .option('--page-size <n>', `results per page, ${range(LIMITS.searchPageSize)}`, positiveInt)
    .addOption(new Option('--mode <mode>', orList(SEARCH_MODES)).argParser(choice(SEARCH_MODES)))
    .option('--min-score <n>', `drop results scoring below this, ${range(LIMITS.minScore)}`, number)
    .addOption(
      new Option('--profile <profile>', orList(RETRIEVAL_PROFILES)).argParser(
        choice(RETRIEVAL_PROFILES),
      ),
    )
    .addOption(new Option('--type <type>', 'filter: only this memory type').argParser(memoryType))
    .option('--metadata <json>', 'filter: metadata pairs that must match', metadata)
    .option('--scope <label>', 'only this scope')
    .option('--namespace <label>', 'only this namespace')
    .option('--container-tag <label>', 'only this container tag');
}

function payload(query: string, flags: SearchFlags): SearchParams {
  const filters = defined({ memory_type: flags.type, metadata: flags.metadata });
  return defined({
    query,
    ...ownerFrom(flags),
    top_k: flags.topK,
    page: flags.page,
    page_size: flags.pageSize,
    search_mode: flags.mode,
    min_score: flags.minScore,
    retrieval_profile: flags.profile,
    filters: Object.keys(filters).length > 0 ? filters : undefined,
    scope: flags.scope,
    namespace: flags.namespace,
    containerTag: flags.containerTag,
  });
}

function formatSearch(result: SearchResult): string {
  if (result.results.length === 0) return 'no matching memories';
  const offset = (result.page - 1) * (result.page_size ?? result.results.length);
  const rows = result.results.map((hit, index) => [
    String(offset + index + 1),
    hit.score.toFixed(3),
    hit.memory_id,
    clip(hit.text, 70),
  ]);
  const footer = `${result.total} in total${result.has_more ? `; next: --page ${result.page + 1}` : ''}${result.request_id ? `\nrequest_id ${result.request_id} (for mnemo feedback)` : ''}`;
  return `${table([['#', 'SCORE', 'MEMORY', 'TEXT'], ...rows])}\n\n${footer}`;
}

function formatContext(result: ContextResult): string {
  if (result.context_text === '') return 'no relevant memories';
  const citations = result.citations.map((c) => [
    `[${c.i}]`,
    c.memory_id,
    `chunk ${c.chunk_index}`,
  ]);
  return [
    result.context_text,
    '',
    table([['CITE', 'MEMORY', 'CHUNK'], ...citations]),
    ...(result.request_id ? ['', `request_id ${result.request_id} (for mnemo feedback)`] : []),
  ].join('\n');
}

/** `mnemo search <query>`. */
export function searchCommand(bind: Bind): Command {
  return searchOptions(new Command('search'))
    .description("Search an owner's memories")
    .action(
      bind(async ({ client, output }: App, query: string, flags: SearchFlags) => {
        output.result(await client.search.query(payload(query, flags)), formatSearch);
      }),
    );
}

/** `mnemo context <query>`. */
export function contextCommand(bind: Bind): Command {
  return searchOptions(new Command('context'))
    .description('Prompt-ready context with numbered citations')
    .action(
      bind(async ({ client, output }: App, query: string, flags: SearchFlags) => {
        output.result(await client.context.get(payload(query, flags)), formatContext);
      }),
    );
}

/** `mnemo feedback <request-id> <positive|negative>`. */
export function feedbackCommand(bind: Bind): Command {
  return new Command('feedback')
    .description('Rate the results of an earlier search or context call')
    .argument('<request-id>', 'the request_id that search or context printed')
    .argument('<feedback>', orList(FEEDBACK_VALUES), choice(FEEDBACK_VALUES))
    .action(
      bind(async ({ client, output }: App, requestId: string, feedback: FeedbackValue) => {
        output.result(
          await client.feedback.send({ request_id: requestId, feedback }),
          (result: FeedbackResponse) =>
            `recorded ${result.feedback} feedback on ${result.request_id}: applied to ${result.applied} memor${result.applied === 1 ? 'y' : 'ies'}`,
        );
      }),
    );
}

import {
  checkOwnerAliases,
  CHUNK_PROFILES,
  ContextResponse,
  DeleteMemoryResponse,
  FEEDBACK_VALUES,
  FeedbackPayload,
  FeedbackResponse,
  DEFAULT_IMPORTANCE,
  LIMITS,
  ListMemoriesQuery,
  ListMemoriesResponse,
  MEMORY_TYPES,
  Memory,
  MemoryIdParams,
  MemoryInsertFields,
  MemoryInsertPayload,
  MemoryInsertResponse,
  Metadata,
  OWNER_ID_ALIASES,
  OWNER_TYPES,
  OWNER_TYPE_ALIASES,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
  SearchFields,
  SearchPayload,
  ContextFields,
  ContextPayload,
  SearchResponse,
  type FeedbackValue,
  type SearchResultItem,
} from '@mnemo/contract';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { validationError, zodDetails } from '../http/validation.js';
import type { Caller, Operations } from '../operations/index.js';
import { between, describeFields, listOf, unstorableArguments } from './schema.js';

/** What a tool call runs: the operations, for the caller of the HTTP request carrying the call. */
export interface ToolContext {
  operations: Operations;
  caller: Caller;
}

/** A successful call: text for the model, and the REST response's shape for programs. */
export interface ToolOutput {
  text: string;
  structured: Record<string, unknown>;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** The listed input: the contract's fields, described for a model. */
  input: z.AnyZodObject;
  /** The listed output: the REST response's schema (plus `request_id` where feedback needs it). */
  output: z.AnyZodObject;
  /** Validates with the full contract schema (refinements included), then runs; throws ServiceError. */
  call(context: ToolContext, args: unknown): Promise<ToolOutput>;
}

function defineTool<P>(
  tool: Omit<McpTool, 'call'> & {
    /** The contract schema the arguments must pass, exactly as the REST body or query must. */
    payload: z.ZodType<P, z.ZodTypeDef, unknown>;
    run(context: ToolContext, payload: P): Promise<ToolOutput>;
  },
): McpTool {
  const { payload, run, ...listed } = tool;
  return {
    ...listed,
    async call(context, args) {
      const unstorable = unstorableArguments(args);
      if (unstorable) throw validationError(unstorable);
      const parsed = payload.safeParse(args ?? {});
      const details = parsed.success ? {} : zodDetails(parsed.error, 'arguments');
      // REST ignores unknown body fields; a tool refuses them (its listed schema says so): a
      // model's misspelt argument (`user` for `user_id`) must not silently redirect the call.
      const given = args && typeof args === 'object' ? Object.keys(args) : [];
      const unknown = given.filter((key) => !Object.hasOwn(listed.input.shape, key));
      if (unknown.length > 0) {
        (details.arguments ??= []).push(`unknown field(s): ${unknown.join(', ')}`);
      }
      if (!parsed.success || unknown.length > 0) throw validationError(details);
      return run(context, parsed.data);
    },
  };
}

// Field descriptions, shared by the tools that take the same contract fields. Values and bounds
// are quoted from the contract, so a description never lists a value the schema refuses.

const ID_ALIASES = OWNER_ID_ALIASES.filter((alias) => alias !== 'owner_id');
const TYPE_ALIASES = OWNER_TYPE_ALIASES.filter((alias) => alias !== 'owner_type');

const OWNER: Record<string, string> = {
  owner_id: `Whose memory this is: your end user's id (or a team or app id). Omit for app-wide memories, which belong to the default owner. ${listOf(ID_ALIASES, 'and')} are aliases: give one of them, or equal values.`,
  ...Object.fromEntries(ID_ALIASES.map((alias) => [alias, 'Alias of owner_id.'])),
  owner_type: `Kind of owner: ${listOf(OWNER_TYPES, 'or', { user: 'the default when an owner id is given' })}. ${listOf(TYPE_ALIASES, 'and')} ${TYPE_ALIASES.length === 1 ? 'is an alias' : 'are aliases'}.`,
  ...Object.fromEntries(TYPE_ALIASES.map((alias) => [alias, 'Alias of owner_type.'])),
};

const SPACE = {
  scope:
    "Optional label partitioning the owner's memories (e.g. a product area); when given, only memories with this scope are seen.",
  namespace:
    "Optional label partitioning the owner's memories (e.g. a project); when given, only memories in this namespace are seen.",
  containerTag:
    "Optional label partitioning the owner's memories (e.g. a document collection); when given, only memories with this tag are seen.",
} as const;

const SEARCH = {
  ...OWNER,
  ...SPACE,
  query: `What to look for, in natural language (${between(LIMITS.query)} characters), e.g. "Where does Jane live?".`,
  top_k: `How many results, ${between(LIMITS.topK)} (default 10).`,
  page: 'Page of results, from 1 (default 1).',
  page_size: `Results per page, ${between(LIMITS.searchPageSize)}; overrides top_k.`,
  filters:
    'Optional filters: memory_type (one type or a list of types), metadata (key/value pairs that must all match; filter_mode "or" matches any), start_time and end_time (ISO 8601, on the time the memory is about: effective_at, else creation time). Unknown keys are refused.',
  explain: 'Accepted for compatibility; has no effect.',
  search_mode: `${listOf(SEARCH_MODES, 'or', {
    hybrid: 'default: meaning and keywords',
    vector: 'meaning only',
    keyword: 'words only',
  })}.`,
  min_score: `Drop results scoring below this, ${between(LIMITS.minScore)}.`,
  retrieval_profile: `${listOf(RETRIEVAL_PROFILES, 'or', {
    balanced: 'default',
    recall: 'more candidates, keeps weak matches',
    precision: 'fewer, stronger matches; default min_score 0.3',
  })}.`,
};

const CONTEXT = {
  ...SEARCH,
  max_tokens: `Most tokens the context text may hold, ${between(LIMITS.contextTokens)} (default about 2,000); the most relevant memories that fit are packed in.`,
};

/** What each feedback value means, for the model choosing one. */
const FEEDBACK_MEANING: Record<FeedbackValue, string> = {
  positive: 'if the results helped',
  negative: 'if they were wrong or unhelpful',
};

const MEMORY_ID =
  'The memory_id (a UUID) returned by add_memory, search_memories, get_context or list_memories.';

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

const clip = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
};

const ownerLabel = (memory: Pick<Memory, 'owner_type' | 'owner_id'>) =>
  `${memory.owner_type}:${memory.owner_id}`;

function pageLine(
  noun: string,
  page: { page: number; page_size?: number | undefined; total: number; shown: number },
): string {
  if (page.total === 0 || page.shown === 0) {
    return page.total === 0
      ? `No ${noun} found.`
      : `No ${noun} on page ${page.page} (${page.total} in total).`;
  }
  const first = (page.page - 1) * (page.page_size ?? page.shown) + 1;
  return `${page.total} ${noun} in total; showing ${first}–${first + page.shown - 1}:`;
}

function feedbackHint(requestId: string): string {
  return `request_id: ${requestId} (pass it to send_feedback to say whether these results helped)`;
}

function searchText(
  results: SearchResultItem[],
  page: { page: number; page_size?: number; total: number },
  requestId: string,
): string {
  const lines = [pageLine('matching memories', { ...page, shown: results.length })];
  const offset = (page.page - 1) * (page.page_size ?? results.length);
  results.forEach((result, i) => {
    lines.push(`${offset + i + 1}. [score ${result.score.toFixed(3)}] ${clip(result.text, 600)}`);
    lines.push(`   memory_id: ${result.memory_id}`);
  });
  lines.push('', feedbackHint(requestId));
  return lines.join('\n');
}

function memoryText(memory: Memory): string {
  const lines = [
    `Memory ${memory.id}`,
    `owner: ${ownerLabel(memory)} · type: ${memory.memory_type} · state: ${memory.lifecycle_state} · importance: ${memory.importance}`,
    `created: ${memory.created_at} · updated: ${memory.updated_at}${memory.effective_at ? ` · effective: ${memory.effective_at}` : ''}`,
  ];
  const labels = [
    memory.scope !== null ? `scope: ${memory.scope}` : '',
    memory.namespace !== null ? `namespace: ${memory.namespace}` : '',
    memory.containerTag !== null ? `containerTag: ${memory.containerTag}` : '',
  ].filter(Boolean);
  if (labels.length > 0) lines.push(labels.join(' · '));
  if (Object.keys(memory.metadata).length > 0)
    lines.push(`metadata: ${JSON.stringify(memory.metadata)}`);
  if (memory.replaced_by_memory_id) lines.push(`replaced by: ${memory.replaced_by_memory_id}`);
  lines.push('', memory.text);
  return lines.join('\n');
}

/**
 * list_memories takes metadata as an object; the contract's query carries it JSON-encoded. It
 * lists one owner's memories (the default owner without an id): a model is not offered REST's
 * all_owners inventory of every end user.
 */
const ListMemoriesArgs = z.preprocess(
  (args) => {
    if (!args || typeof args !== 'object' || Array.isArray(args)) return args;
    const { metadata, ...rest } = args as Record<string, unknown>;
    return metadata === undefined ? rest : { ...rest, metadata: JSON.stringify(metadata) };
  },
  ListMemoriesQuery.innerType().omit({ all_owners: true }).superRefine(checkOwnerAliases),
);

const MemoryIdArgs = z.object({ memory_id: MemoryIdParams.shape.id });

export const TOOLS: McpTool[] = [
  defineTool({
    name: 'add_memory',
    title: 'Add a memory',
    description: [
      'Store one memory for an owner: a self-contained statement worth remembering across conversations',
      '(a fact, preference, event, task or correction), written so that it makes sense on its own,',
      'e.g. "Jane is allergic to peanuts". Store one statement per memory.',
      'The same or nearly the same text for the same owner is not stored twice: the existing memory comes',
      "back with deduped: true. When a fact changed, pass replaces_memory_id with the outdated memory's id:",
      'it is kept as replaced and no longer recalled. Returns the memory_id.',
    ].join(' '),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    input: describeFields(MemoryInsertFields.shape, {
      text: `The memory: one self-contained statement (${between(LIMITS.memoryText)} characters).`,
      ...OWNER,
      ...SPACE,
      metadata:
        'Flat key/value pairs (string, number, boolean or null values) stored with the memory; searches can filter on them.',
      memory_type: `${listOf(MEMORY_TYPES, 'or', { note: 'the default' })}. Ranking favours pin, correction, fact and preference.`,
      importance: `Ranking weight from ${between(LIMITS.importance)} (default ${DEFAULT_IMPORTANCE}): higher makes the memory more likely to be recalled.`,
      chunk_profile: `How long text is split for search: ${listOf(CHUNK_PROFILES, 'or', {
        balanced: 'default',
        dense: 'fact-dense text, smaller pieces',
        document: 'long prose, paragraphs kept together',
      })}.`,
      extract:
        'Default true: child memories may be extracted from the text automatically; false stores only this memory.',
      effective_at:
        'When the statement became true (ISO 8601, e.g. 2026-03-01); orders conflicting facts.',
      replaces_memory_id:
        'memory_id of an outdated memory of the same owner that this one supersedes; it becomes lifecycle_state "replaced".',
      idempotency_key: `Optional key (${between(LIMITS.idempotencyKey)} characters): retrying with the same key and arguments returns the first result instead of storing twice.`,
    }),
    output: MemoryInsertResponse,
    payload: MemoryInsertPayload,
    async run({ operations, caller }, payload) {
      const response = await operations.writeMemory(caller, payload);
      const lines = response.deduped
        ? [
            `Not stored again: memory ${response.memory_id} already holds this (${response.dedupe_kind ?? 'near'} duplicate).`,
          ]
        : [
            `Stored memory ${response.memory_id}${response.chunks !== undefined ? ` (${response.chunks} chunk${response.chunks === 1 ? '' : 's'})` : ''}.`,
          ];
      if (response.superseded_memory_id)
        lines.push(`It replaces memory ${response.superseded_memory_id}, now marked replaced.`);
      if (response.safety?.pii_hints.length)
        lines.push(`Possible personal data in the text: ${response.safety.pii_hints.join(', ')}.`);
      return { text: lines.join('\n'), structured: response };
    },
  }),

  defineTool({
    name: 'search_memories',
    title: 'Search memories',
    description: [
      "Search an owner's memories by meaning and by keywords (hybrid search). Returns the best matches, most",
      'relevant first, each with a score from 0 to 1 and its memory_id, plus a request_id to pass to',
      'send_feedback. Use it to check what is known before answering; use get_context instead for a',
      'ready-to-quote block of text with numbered citations.',
    ].join(' '),
    annotations: READ_ONLY,
    input: describeFields(SearchFields.shape, SEARCH),
    output: SearchResponse.extend({ request_id: z.string() }),
    payload: SearchPayload,
    async run({ operations, caller }, payload) {
      const { requestId } = caller;
      const { results, page, page_size, total, has_more } = await operations.searchMemories(
        caller,
        payload,
      );
      const response = { results, page, page_size, total, has_more, request_id: requestId };
      return {
        text: searchText(results, { page, page_size, total }, requestId),
        structured: response,
      };
    },
  }),

  defineTool({
    name: 'get_context',
    title: 'Get context for a question',
    description: [
      "Get prompt-ready context for a question: the owner's most relevant memories as a numbered list",
      '([1], [2], …) to cite, followed by linked memories, and a citation table mapping each number to its',
      'memory_id. Takes the same arguments as search_memories. Returns a request_id to pass to send_feedback.',
    ].join(' '),
    annotations: READ_ONLY,
    input: describeFields(ContextFields.shape, CONTEXT),
    output: ContextResponse.extend({ request_id: z.string() }),
    payload: ContextPayload,
    async run({ operations, caller }, payload) {
      const { requestId } = caller;
      const context = await operations.getContext(caller, payload);
      const lines = context.context_text
        ? [
            context.context_text,
            '',
            'Citations:',
            ...context.citations.map(
              (c) => `[${c.i}] memory_id ${c.memory_id} (chunk ${c.chunk_index})`,
            ),
          ]
        : ['No relevant memories found.'];
      lines.push('', feedbackHint(requestId));
      return { text: lines.join('\n'), structured: { ...context, request_id: requestId } };
    },
  }),

  defineTool({
    name: 'list_memories',
    title: 'List memories',
    description: [
      `List an owner's stored memories, newest first, a page at a time (page, page_size up to ${LIMITS.listPageSize.max}), optionally`,
      'filtered by namespace, memory_type, metadata and time (effective_at, else creation). Includes replaced and archived memories',
      '(see lifecycle_state). Use it to browse or review what is stored; use search_memories to find memories',
      'about something.',
    ].join(' '),
    annotations: READ_ONLY,
    input: describeFields(
      ListMemoriesQuery.innerType()
        .omit({ all_owners: true })
        .extend({ metadata: Metadata.optional() }).shape,
      {
        ...OWNER,
        namespace: 'Only memories in this namespace.',
        page: 'Page, from 1 (default 1).',
        page_size: `Memories per page, ${between(LIMITS.listPageSize)} (default 20).`,
        memory_type: `Only memories of this type: ${listOf(MEMORY_TYPES, 'or')}.`,
        metadata: 'Only memories whose metadata holds all of these key/value pairs.',
        start_time:
          'Only memories about this time or later (effective_at, else creation; ISO 8601).',
        end_time:
          'Only memories about this time or earlier (effective_at, else creation; ISO 8601).',
      },
    ),
    output: ListMemoriesResponse,
    payload: ListMemoriesArgs,
    async run({ operations, caller }, query) {
      const list = await operations.listMemories(caller, query);
      const lines = [pageLine('memories', { ...list, shown: list.results.length })];
      const offset = (list.page - 1) * list.page_size;
      list.results.forEach((memory, i) => {
        lines.push(
          `${offset + i + 1}. ${clip(memory.text, 300)}`,
          `   memory_id: ${memory.id} · ${ownerLabel(memory)} · ${memory.memory_type} · ${memory.lifecycle_state} · created ${memory.created_at}`,
        );
      });
      if (list.has_more) lines.push('', `More on page ${list.page + 1}.`);
      return { text: lines.join('\n'), structured: list };
    },
  }),

  defineTool({
    name: 'get_memory',
    title: 'Read a memory',
    description:
      'Read one memory by its memory_id: its full text, owner, type, metadata, lifecycle state (active, replaced, archived) and timestamps.',
    annotations: READ_ONLY,
    input: describeFields(MemoryIdArgs.shape, { memory_id: MEMORY_ID }),
    output: Memory,
    payload: MemoryIdArgs,
    async run({ operations, caller }, { memory_id }) {
      const memory = await operations.getMemory(caller, { id: memory_id });
      return { text: memoryText(memory), structured: memory };
    },
  }),

  defineTool({
    name: 'delete_memory',
    title: 'Delete a memory',
    description: [
      'Permanently delete one memory by its memory_id, with its chunks and links and the memories extracted from it (listed in deleted_children). This cannot be undone.',
      'When a fact merely changed, prefer add_memory with replaces_memory_id; delete what must be forgotten',
      '(the user asked you to forget it, or it was stored by mistake).',
    ].join(' '),
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    input: describeFields(MemoryIdArgs.shape, { memory_id: MEMORY_ID }),
    output: DeleteMemoryResponse,
    payload: MemoryIdArgs,
    async run({ operations, caller }, { memory_id }) {
      const deleted = await operations.deleteMemory(caller, { id: memory_id });
      return {
        text:
          deleted.deleted_children.length === 0
            ? `Deleted memory ${deleted.id} with its chunks and links.`
            : `Deleted memory ${deleted.id} with its chunks and links, and the ${deleted.deleted_children.length} memories extracted from it: ${deleted.deleted_children.join(', ')}.`,
        structured: deleted,
      };
    },
  }),

  defineTool({
    name: 'send_feedback',
    title: 'Rate search results',
    description: [
      'Say whether the results of an earlier search_memories or get_context call helped: feedback "positive"',
      'or "negative" with the request_id that call returned. Later searches rank the memories of that call',
      'higher (positive) or lower (negative), the top result most. Voting again on the same request_id',
      'replaces the earlier vote.',
    ].join(' '),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    input: describeFields(FeedbackPayload.shape, {
      feedback: `${FEEDBACK_VALUES.map((value) => `${value} ${FEEDBACK_MEANING[value]}`).join(', ')}.`,
      request_id: 'The request_id returned by search_memories or get_context.',
    }),
    output: FeedbackResponse,
    payload: FeedbackPayload,
    async run({ operations, caller }, payload) {
      const result = await operations.sendFeedback(caller, payload);
      return {
        text: `Recorded ${result.feedback} feedback on request ${result.request_id}: applied to ${result.applied} memor${result.applied === 1 ? 'y' : 'ies'}.`,
        structured: result,
      };
    },
  }),
];

/**
 * Retrieval quality on LoCoMo: every dialog turn written through `POST /v1/memories`, every
 * question asked through `POST /v1/search`, dialog-level recall@k as the LoCoMo paper measures it
 * (share of a question's evidence turns in the top k; no evidence counts as 1; mean over
 * questions), for each search_mode and retrieval_profile, beside a plain BM25 over the same turns
 * and the paper's DRAGON row.
 *
 *   pnpm --filter @mnemo/bench bench:quality [path/to/locomo.json]
 *
 * Default data: ../shared/bench-data/locomo-dev.json from the repository root (absent: a message,
 * exit 0). PGlite in a temporary folder unless BENCH_DATABASE_URL names a disposable PostgreSQL
 * database. BENCH_LOCOMO_MODES / BENCH_LOCOMO_PROFILES (comma lists) narrow the grid;
 * BENCH_LOCOMO_SPACE picks how turns are isolated from each other's lifecycle rules: `turn`
 * (default: one namespace per turn), `session`, or `owner` (all turns of a conversation in one
 * space, exactly as a naive import would write them). The lifecycle table also ingests once as
 * `owner`, in a workspace of its own, to count what a naive import loses (BENCH_LOCOMO_LIFECYCLE=0
 * skips it). The same turns are imported naively through `POST /v1/memories/conversation` too,
 * a session per request, grouped by exchange (the route's default) and by message
 * (BENCH_LOCOMO_CONVERSATION=0 skips them).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import { createApp } from '../server/src/app.js';
import { loadConfig } from '../server/src/config.js';
import { openDatabase } from '../server/src/db/client.js';
import { createWorkspace } from '../server/src/db/queries/workspaces.js';
import { memories } from '../server/src/db/schema/index.js';
import { createDeps } from '../server/src/deps.js';
import { messageLine } from '../server/src/services/ingest/conversation.js';
import { createLogger } from '../server/src/logger.js';
import { Bm25Index } from './locomo-bm25.js';
import {
  evidenceSessions,
  meanSessionScore,
  sessionRun,
  sessionsOf,
  type SessionRun,
} from './locomo-sessions.js';
import {
  leaveOneOut,
  mean,
  meanRecall,
  questionRecalls,
  type QuestionRecalls,
} from './locomo-folds.js';
import {
  CATEGORY_NAMES,
  KS,
  loadLocomo,
  summarise,
  type Question,
  type RecallRow,
  type Turn,
} from './locomo-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const MODES = (process.env.BENCH_LOCOMO_MODES ?? 'hybrid,vector,keyword').split(',') as Array<
  'hybrid' | 'vector' | 'keyword'
>;
const PROFILES = (process.env.BENCH_LOCOMO_PROFILES ?? 'balanced,recall,precision').split(
  ',',
) as Array<'balanced' | 'recall' | 'precision'>;
/** Which granularities run: one memory per turn (the main grid), one per session. */
const GRANULARITY = new Set(
  (process.env.BENCH_LOCOMO_GRANULARITY ?? 'turn,session').split(',').filter(Boolean),
);
/** The session-granularity table's k. */
const SESSION_K = 5;
const SPACE = (process.env.BENCH_LOCOMO_SPACE ?? 'turn') as 'turn' | 'session' | 'owner';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
/** Names this run's settings in the fold table and in a saved file (BENCH_LOCOMO_SAVE). */
const LABEL = process.env.BENCH_LOCOMO_LABEL ?? 'now';
/** min_score thresholds whose precision and recall the bench reports. */
const THRESHOLDS = [0.3, 0.5, 0.7];
const DEPTH = 50;

function dataPath(): string {
  const arg = process.argv.slice(2).find((value) => !value.startsWith('-'));
  // pnpm --filter runs scripts in bench/: a relative argument is taken from where the user stood.
  if (arg) return resolve(process.env.INIT_CWD ?? process.cwd(), arg);
  return resolve(repoRoot, '..', 'shared', 'bench-data', 'locomo-dev.json');
}

function listen(app: ReturnType<typeof createApp>): Promise<{ server: Server; base: string }> {
  return new Promise((done) => {
    const server = app.listen(0, '127.0.0.1', () => {
      // Client and server share this process: on a busy machine a late timer let the server close
      // a kept-alive socket the client had just reused (ECONNRESET). The server waits longer than
      // fetch keeps an idle socket (4 s).
      server.keepAliveTimeout = 60_000;
      const { port } = server.address() as AddressInfo;
      done({ server, base: `http://127.0.0.1:${port}` });
    });
  });
}

async function post<T>(url: string, key: string, body: unknown, retries = 0): Promise<T> {
  const send = () =>
    fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  let res: Response;
  try {
    res = await send();
  } catch (error) {
    // A kept-alive socket the server closed as it was reused (ECONNRESET): worth one more try
    // for a read such as a search, never for a write.
    if (retries <= 0) throw error;
    return post(url, key, body, retries - 1);
  }
  const json = (await res.json()) as T;
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`${url}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Runs `task` over `items` with at most `limit` in flight; results in input order. */
async function pool<T, R>(
  items: T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      out[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

interface WriteResponse {
  memory_id: string;
  deduped?: boolean;
  dedupe_kind?: string;
  superseded_memory_id?: string;
  trace?: { memory_evolution: string };
}

/** What the bench reads of a `POST /v1/memories/conversation` response. */
interface ConversationResponse {
  complete: boolean;
  turns: Array<{ message_start: number; message_end: number; memory_id?: string }>;
}

/** How a conversation import is grouped: the route's default (`exchange`) or one turn per message. */
type GroupBy = 'exchange' | 'message';

/** A search result as the bench scores it: the evidence turns it holds, and its score. */
interface ScoredHit {
  ids: string[];
  score: number;
}

/**
 * A result's turns, one list entry per turn, first occurrence kept: for memories that hold
 * several turns (a conversation import), so that k counts turns of text as it does for the
 * memories of one turn each.
 */
function byTurn(hits: ScoredHit[]): string[][] {
  const seen = new Set<string>();
  return hits.flatMap((hit) =>
    hit.ids.filter((id) => !seen.has(id) && seen.add(id)).map((id) => [id]),
  );
}

/** The turn of a memory written for one turn (memory id → `<conversation>/<dia_id>`). */
const oneTurn =
  (memoryToDia: Map<string, string>) =>
  (hit: { memory_id: string }, conversation: string): string[] => {
    const dia = memoryToDia.get(hit.memory_id);
    return dia ? [dia.slice(conversation.length + 1)] : [];
  };

/**
 * Whether a chunk holds (part of) a message's line: its beginning or its end, or the chunk lies
 * inside it (a long message cut into several chunks).
 */
const holdsLine = (chunk: string, line: string) =>
  chunk.includes(line.slice(0, 40)) || chunk.includes(line.slice(-40)) || line.includes(chunk);

interface IngestReport {
  space: string;
  turns: number;
  seconds: number;
  deduped: number;
  merged: number;
  superseded: number;
  keptAsHistory: number;
  /** Memories by final state: active (and not expired), replaced, archived, expired. */
  states: Record<string, number>;
  /**
   * Turns whose own text no search can find after the ingest: not an active memory (expired
   * ones are history, which every search recalls).
   */
  lost: number;
}

function namespaceOf(space: string, turn: Turn): string | undefined {
  if (space === 'turn') return turn.diaId;
  if (space === 'session') return `session-${turn.session}`;
  return undefined;
}

const fmt = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(1));

async function main(): Promise<void> {
  const path = dataPath();
  if (!existsSync(path)) {
    console.log(
      `LoCoMo data not found at ${path}; pass the path of a LoCoMo-format JSON file. Skipping the quality benchmark.`,
    );
    return;
  }
  const data = loadLocomo(path);
  // BENCH_LOCOMO_CONVERSATIONS (comma list of sample ids) narrows the data, for quick iterations.
  const only = (process.env.BENCH_LOCOMO_CONVERSATIONS ?? '').split(',').filter(Boolean);
  if (only.length > 0) {
    data.conversations = data.conversations.filter((c) => only.includes(c));
    data.turns = data.turns.filter((t) => only.includes(t.conversation));
    data.questions = data.questions.filter((q) => only.includes(q.conversation));
  }
  const started = new Date();

  // The default offline configuration; MNEMO_* variables still apply, for experiments.
  const config = loadConfig({
    // Limits off unless asked for: thousands of writes and searches through one key would pass
    // the per-key rate and the daily caps.
    MNEMO_LIMITS: 'off',
    ...process.env,
    LOG_LEVEL: 'silent',
    MNEMO_HYGIENE_INTERVAL_MS: '0',
  });
  const dataDir = process.env.BENCH_DATABASE_URL
    ? undefined
    : mkdtempSync(join(tmpdir(), 'mnemo-locomo-'));
  const database = await openDatabase(
    process.env.BENCH_DATABASE_URL
      ? { databaseUrl: process.env.BENCH_DATABASE_URL }
      : { dataDir: join(dataDir!, 'pg') },
  );
  const deps = await createDeps(config, createLogger('silent'), database);
  const workspace = await createWorkspace(database.db, { name: `locomo-${Date.now()}` });
  const key = (await deps.apiKeys.mint(workspace.id, 'locomo')).plaintext;
  const app = await listen(createApp(deps));
  const owner = (conversation: string) => `locomo-${conversation}`;

  try {
    type Space = 'turn' | 'session' | 'owner';
    /**
     * Writes every turn: turns of one conversation in order (the lifecycle rules read what came
     * before), conversations side by side. dia_ids repeat across conversations: memories map to
     * `<conversation>/<dia_id>` internally.
     */
    const ingest = async (space: Space, workspaceId: string, apiKey: string) => {
      const memoryToDia = new Map<string, string>();
      const report: IngestReport = {
        space,
        turns: data.turns.length,
        seconds: 0,
        deduped: 0,
        merged: 0,
        superseded: 0,
        keptAsHistory: 0,
        states: {},
        lost: 0,
      };
      const t0 = performance.now();
      await pool(data.conversations, CONCURRENCY, async (conversation) => {
        for (const turn of data.turns.filter((t) => t.conversation === conversation)) {
          const namespace = namespaceOf(space, turn);
          const response = await post<WriteResponse>(`${app.base}/v1/memories`, apiKey, {
            user_id: owner(conversation),
            text: turn.text,
            metadata: { dia_id: turn.diaId, speaker: turn.speaker, session: turn.session },
            extract: false,
            ...(turn.effectiveAt ? { effective_at: turn.effectiveAt } : {}),
            ...(namespace ? { namespace } : {}),
          });
          if (response.deduped) {
            report.deduped += 1;
            continue;
          }
          if (response.trace?.memory_evolution === 'merged_into_existing') report.merged += 1;
          if (response.trace?.memory_evolution === 'kept_as_history_of_newer_fact')
            report.keptAsHistory += 1;
          if (response.superseded_memory_id) report.superseded += 1;
          // A memory answers for the turn whose text it holds now (a merge rewrites it).
          memoryToDia.set(response.memory_id, `${conversation}/${turn.diaId}`);
        }
      });
      report.seconds = (performance.now() - t0) / 1000;
      const state = sql<string>`case when ${memories.lifecycleState} = 'active' and ${memories.expiresAt} <= now() then 'expired' else ${memories.lifecycleState} end`;
      const rows = await database.db
        .select({ state, n: count() })
        .from(memories)
        .where(and(eq(memories.workspaceId, workspaceId), isNull(memories.parentMemoryId)))
        .groupBy(state);
      for (const row of rows) report.states[row.state] = Number(row.n);
      const live = await database.db
        .select({ id: memories.id })
        .from(memories)
        .where(and(eq(memories.workspaceId, workspaceId), eq(memories.lifecycleState, 'active')));
      const liveDia = new Set(
        live.map((row) => memoryToDia.get(row.id)).filter((id): id is string => id !== undefined),
      );
      report.lost = data.turns.filter(
        (turn) => !liveDia.has(`${turn.conversation}/${turn.diaId}`),
      ).length;
      return { memoryToDia, report };
    };

    /**
     * Session granularity: every session one memory (its turns, one line each, dated by the
     * session), in a workspace of its own, a namespace per session (no lifecycle rule between
     * sessions); each question searched once per mode (balanced profile), beside BM25 over the
     * same session texts. Results map to sessions; a question's evidence is the sessions of its
     * evidence turns.
     */
    const sessionGranularity = async () => {
      const target = await createWorkspace(database.db, { name: `locomo-sessions-${Date.now()}` });
      const apiKey = (await deps.apiKeys.mint(target.id, 'locomo')).plaintext;
      const sessions = sessionsOf(data.turns);
      const memoryToSession = new Map<string, string>();
      await pool(data.conversations, CONCURRENCY, async (conversation) => {
        for (const session of sessions.filter((s) => s.conversation === conversation)) {
          const response = await post<WriteResponse>(`${app.base}/v1/memories`, apiKey, {
            user_id: owner(conversation),
            text: session.text,
            metadata: { session: session.session },
            extract: false,
            namespace: `session-${session.session}`,
            ...(session.effectiveAt ? { effective_at: session.effectiveAt } : {}),
          });
          memoryToSession.set(response.memory_id, session.id);
        }
      });
      const runs: SessionRun[] = [];
      const bm25Sessions = new Map<string, Bm25Index>();
      for (const conversation of data.conversations) {
        const own = sessions.filter((s) => s.conversation === conversation);
        bm25Sessions.set(
          conversation,
          new Bm25Index(
            own.map((s) => s.id),
            own.map((s) => s.text),
          ),
        );
      }
      runs.push(
        sessionRun(
          'BM25',
          data.questions,
          data.questions.map((q) => bm25Sessions.get(q.conversation)!.search(q.question, DEPTH)),
          SESSION_K,
        ),
      );
      const sessionModes = (process.env.BENCH_LOCOMO_SESSION_MODES ?? 'hybrid,keyword,vector')
        .split(',')
        .filter(Boolean) as Array<'hybrid' | 'keyword' | 'vector'>;
      for (const mode of sessionModes) {
        const ranked = await pool(data.questions, CONCURRENCY, async (question: Question) => {
          const response = await post<{ results: Array<{ memory_id: string }> }>(
            `${app.base}/v1/search`,
            apiKey,
            {
              user_id: owner(question.conversation),
              query: question.question,
              search_mode: mode,
              page_size: DEPTH,
            },
            1,
          );
          return response.results
            .map((hit) => memoryToSession.get(hit.memory_id))
            .filter((id): id is string => id !== undefined);
        });
        runs.push(sessionRun(`${LABEL}:${mode}`, data.questions, ranked, SESSION_K));
        console.error(
          `  sessions, ${mode}: recall_all@${SESSION_K} ${fmt(meanSessionScore(runs.at(-1)!, data.questions, 'recallAll'))}`,
        );
      }
      return { sessions: sessions.length, runs };
    };
    const sessionResult = GRANULARITY.has('session') ? await sessionGranularity() : undefined;
    const sessionTable = (say: Say) => {
      if (!sessionResult) return;
      const { runs } = sessionResult;
      const questions = data.questions;
      const withEvidence = questions.filter((q) => evidenceSessions(q).length > 0).length;
      const several = (q: Question) => evidenceSessions(q).length > 1;
      const severalCount = questions.filter(several).length;
      const k = SESSION_K;
      say();
      say(
        `Session granularity: one memory per session (${sessionResult.sessions} memories: the session's turns, one line each, ` +
          `effective_at = session date, a namespace per session), evidence = the sessions of the evidence turns; ` +
          `${withEvidence} questions with evidence (${severalCount} with evidence in several sessions). ` +
          `recall_all@${k}: every evidence session in the top ${k}; recall_any@${k}: at least one; ndcg@${k}: binary relevance. ` +
          'Mnemo rows: `POST /v1/search`, balanced profile, by search_mode.',
      );
      say();
      say(
        `| retriever | recall_all@${k} | ndcg@${k} | recall_any@${k} | recall_all@${k}, several sessions | ${data.conversations.map((c) => `${c} recall_all@${k}`).join(' | ')} | fold worst |`,
      );
      say(`|---|---|---|---|---|${data.conversations.map(() => '---').join('|')}|---|`);
      for (const run of runs) {
        const folds = data.conversations.map((c) =>
          meanSessionScore(run, questions, 'recallAll', (q) => q.conversation === c),
        );
        say(
          `| ${run.label} | ${fmt(meanSessionScore(run, questions, 'recallAll'))} | ${fmt(meanSessionScore(run, questions, 'ndcg'))} | ` +
            `${fmt(meanSessionScore(run, questions, 'recallAny'))} | ${fmt(meanSessionScore(run, questions, 'recallAll', several))} | ` +
            `${folds.map(fmt).join(' | ')} | ${fmt(Math.min(...folds))} |`,
        );
      }
      if (process.env.BENCH_LOCOMO_SESSION_SAVE)
        writeFileSync(process.env.BENCH_LOCOMO_SESSION_SAVE, JSON.stringify(runs));
    };
    if (!GRANULARITY.has('turn')) {
      const lines: string[] = [];
      sessionTable((line = '') => lines.push(line));
      console.log(lines.join('\n'));
      return;
    }

    const { memoryToDia, report } = await ingest(SPACE, workspace.id, key);
    const reports = [report];
    // What a naive import (every turn of a conversation in one space) loses to the lifecycle
    // rules, in a workspace of its own, and how the default search does on it;
    // BENCH_LOCOMO_LIFECYCLE=0 skips it.
    let naiveImport: { key: string; memoryToDia: Map<string, string> } | undefined;
    if (SPACE !== 'owner' && process.env.BENCH_LOCOMO_LIFECYCLE !== '0') {
      const naive = await createWorkspace(database.db, { name: `locomo-naive-${Date.now()}` });
      const naiveKey = (await deps.apiKeys.mint(naive.id, 'locomo')).plaintext;
      const ingested = await ingest('owner', naive.id, naiveKey);
      reports.push(ingested.report);
      naiveImport = { key: naiveKey, memoryToDia: ingested.memoryToDia };
    }

    /**
     * A naive import through `POST /v1/memories/conversation`: each session one request, its turns
     * as messages (role user, named by the speaker, the session's date as timestamp), in a
     * workspace of its own. Keeps, per memory, the turns it holds with the line each is written as
     * (`messageLine`), so a result's chunk can be mapped to the turns in it.
     */
    const ingestConversations = async (groupBy: GroupBy) => {
      const target = await createWorkspace(database.db, {
        name: `locomo-conversation-${groupBy}-${Date.now()}`,
      });
      const apiKey = (await deps.apiKeys.mint(target.id, 'locomo')).plaintext;
      const linesOf = new Map<string, Array<{ dia: string; line: string }>>();
      let incomplete = 0;
      const t0 = performance.now();
      await pool(data.conversations, CONCURRENCY, async (conversation) => {
        const turns = data.turns.filter((t) => t.conversation === conversation);
        for (const session of [...new Set(turns.map((t) => t.session))]) {
          const messages = turns.filter((t) => t.session === session);
          const sent = messages.map((t) => ({
            role: 'user' as const,
            name: t.speaker,
            content: t.message,
            ...(t.effectiveAt ? { timestamp: t.effectiveAt } : {}),
          }));
          const response = await post<ConversationResponse>(
            `${app.base}/v1/memories/conversation`,
            apiKey,
            {
              user_id: owner(conversation),
              conversation_id: `${conversation}/session-${session}`,
              extract: false,
              ...(groupBy === 'message' ? { group_by: 'message' } : {}),
              messages: sent,
            },
          );
          if (!response.complete) incomplete += 1;
          for (const turn of response.turns) {
            if (!turn.memory_id) continue;
            const held = linesOf.get(turn.memory_id) ?? [];
            // The line the route writes for the message (its text is these lines).
            for (let i = turn.message_start; i <= turn.message_end; i += 1)
              held.push({ dia: messages[i]!.diaId, line: messageLine(sent[i]!) });
            linesOf.set(turn.memory_id, held);
          }
        }
      });
      const seconds = (performance.now() - t0) / 1000;
      let unmapped = 0;
      let hits = 0;
      const turnsOf = (hit: { memory_id: string; text: string }) => {
        const ids = (linesOf.get(hit.memory_id) ?? [])
          .filter(({ line }) => holdsLine(hit.text, line))
          .map(({ dia }) => dia);
        hits += 1;
        if (ids.length === 0) unmapped += 1;
        return ids;
      };
      const searched = await searchAll('hybrid', 'balanced', apiKey, turnsOf, true);
      const perResult = summarise(
        data.questions,
        searched.scored.map((list) => list.map((hit) => hit.ids)),
      );
      return {
        groupBy,
        memories: linesOf.size,
        seconds,
        incomplete,
        unmapped: hits === 0 ? 0 : unmapped / hits,
        perTurn: searched,
        perResult,
      };
    };

    // BM25 over the same turn texts, per conversation.
    const indexes = new Map<string, Bm25Index>();
    for (const conversation of data.conversations) {
      const turns = data.turns.filter((t) => t.conversation === conversation);
      indexes.set(
        conversation,
        new Bm25Index(
          turns.map((t) => t.diaId),
          turns.map((t) => t.text),
        ),
      );
    }
    const bm25Lists = data.questions.map((q) =>
      indexes
        .get(q.conversation)!
        .search(q.question, DEPTH)
        .map((id) => [id]),
    );
    const bm25 = summarise(data.questions, bm25Lists);
    const bm25PerQuestion = questionRecalls('BM25', data.questions, bm25Lists);

    /** Every question through POST /v1/search; the evidence turns each answer holds, best first. */
    const searchAll = async (
      mode: (typeof MODES)[number],
      profile: (typeof PROFILES)[number],
      apiKey: string,
      turnsOf: (hit: { memory_id: string; text: string }, conversation: string) => string[],
      perTurn = false,
    ) => {
      const t1 = performance.now();
      const ranked = await pool(data.questions, CONCURRENCY, async (question: Question) => {
        const response = await post<{
          results: Array<{ memory_id: string; text: string; score: number }>;
        }>(
          `${app.base}/v1/search`,
          apiKey,
          {
            user_id: owner(question.conversation),
            query: question.question,
            search_mode: mode,
            retrieval_profile: profile,
            page_size: DEPTH,
          },
          1,
        );
        return response.results.map((hit): ScoredHit => ({
          ids: turnsOf(hit, question.conversation),
          score: hit.score,
        }));
      });
      const ms = (performance.now() - t1) / data.questions.length;
      const lists = ranked.map((hits) => (perTurn ? byTurn(hits) : hits.map((hit) => hit.ids)));
      return {
        mode,
        profile,
        row: summarise(data.questions, lists),
        ms,
        perQuestion: questionRecalls(`${LABEL}:${mode}/${profile}`, data.questions, lists),
        scored: ranked,
      };
    };

    const results: Array<{
      mode: string;
      profile: string;
      row: RecallRow;
      ms: number;
      perQuestion: QuestionRecalls;
      scored: ScoredHit[][];
    }> = [];
    for (const mode of MODES) {
      for (const profile of PROFILES) {
        results.push(await searchAll(mode, profile, key, oneTurn(memoryToDia)));
        console.error(`  ${mode}/${profile}: R@10 ${fmt(results.at(-1)!.row.overall[10])}`);
      }
    }
    const naiveResult = naiveImport
      ? await searchAll('hybrid', 'balanced', naiveImport.key, oneTurn(naiveImport.memoryToDia))
      : undefined;
    if (naiveResult)
      console.error(`  owner space, hybrid/balanced: R@10 ${fmt(naiveResult.row.overall[10])}`);
    // BENCH_LOCOMO_CONVERSATION=0 skips the imports through the conversation route.
    const conversationImports: Array<Awaited<ReturnType<typeof ingestConversations>>> = [];
    if (process.env.BENCH_LOCOMO_CONVERSATION !== '0') {
      for (const groupBy of ['exchange', 'message'] as const) {
        conversationImports.push(await ingestConversations(groupBy));
        const last = conversationImports.at(-1)!;
        console.error(
          `  conversation import (${groupBy}), hybrid/balanced: R@10 ${fmt(last.perTurn.row.overall[10])} in turns, ${fmt(last.perResult.overall[10])} in results`,
        );
      }
    }
    await deps.background.drain();

    const lines: string[] = [];
    const say = (line = '') => lines.push(line);
    say(`# Retrieval quality: LoCoMo dialog-level recall`);
    say();
    say(
      `${started.toISOString().slice(0, 16)}Z · ${database.driver} · ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ` +
        `${Math.round(totalmem() / 2 ** 30)} GiB · Node ${process.version} · embeddings ${deps.embeddings.version} · ` +
        `rerank ${deps.reranker?.name ?? 'none'}`,
    );
    say();
    say(
      `Data: \`${path.replace(resolve(repoRoot, '..') + '/', '../')}\`: ${data.conversations.length} conversations, ` +
        `${data.turns.length} turns, ${data.questions.length} questions. Each turn written through \`POST /v1/memories\` ` +
        `(extract: false, effective_at = session date, space: ${SPACE}); each question through \`POST /v1/search\`, ` +
        `page_size ${DEPTH}. Recall@k as the LoCoMo paper: share of the evidence turns in the top k, no evidence = 1, mean over questions.`,
    );
    say();
    say('| retriever | mode | profile | R@5 | R@10 | R@20 | R@25 | R@50 | ms/search |');
    say('|---|---|---|---|---|---|---|---|---|');
    say('| DRAGON (paper, all 10 conversations) | dense | – | 56.7 | 66.2 | – | 76.7 | 82.7 | – |');
    say(
      `| BM25 (in-process, same turns) | – | – | ${KS.map((k) => fmt(bm25.overall[k])).join(' | ')} | – |`,
    );
    for (const { mode, profile, row, ms } of results) {
      say(
        `| Mnemo | ${mode} | ${profile} | ${KS.map((k) => fmt(row.overall[k])).join(' | ')} | ${ms.toFixed(1)} |`,
      );
    }
    if (naiveResult) {
      say(
        `| Mnemo, every turn in the owner's one space | hybrid | balanced | ${KS.map((k) => fmt(naiveResult.row.overall[k])).join(' | ')} | ${naiveResult.ms.toFixed(1)} |`,
      );
    }
    for (const imported of conversationImports) {
      const label = `Mnemo, conversation import (${imported.groupBy}: ${imported.memories} memories)`;
      say(
        `| ${label}, k in turns | hybrid | balanced | ${KS.map((k) => fmt(imported.perTurn.row.overall[k])).join(' | ')} | ${imported.perTurn.ms.toFixed(1)} |`,
      );
      say(
        `| ${label}, k in results | hybrid | balanced | ${KS.map((k) => fmt(imported.perResult.overall[k])).join(' | ')} | – |`,
      );
    }
    if (conversationImports.length > 0) {
      say();
      say(
        'Conversation import: each session one `POST /v1/memories/conversation` request, its turns as messages ' +
          '(role `user`, `name` the speaker, `timestamp` the session date; the text without the `<speaker> said` frame), ' +
          "in a workspace of its own; `exchange` is the route's default grouping (between two people, a message and the answer " +
          'after it), `message` one memory per message. A result counts for the turns whose line its chunk ' +
          'holds (its beginning or end); "k in turns" cuts the results, taken in order, after k distinct turns (the same ' +
          'amount of dialogue as k one-turn memories), "k in results" after k results.',
      );
      say();
      say(
        '| grouping | memories | writes/s (turns) | requests not complete | results mapped to no turn |',
      );
      say('|---|---|---|---|---|');
      for (const imported of conversationImports) {
        say(
          `| ${imported.groupBy} | ${imported.memories} | ${(data.turns.length / imported.seconds).toFixed(0)} | ${imported.incomplete} | ${(100 * imported.unmapped).toFixed(1)}% |`,
        );
      }
    }
    say();
    const categories = Object.keys(bm25.countByCategory).map(Number).sort();
    say('R@10 by category (questions):');
    say();
    say(
      `| retriever | mode | profile | ${categories.map((c) => `${c} ${CATEGORY_NAMES[c] ?? ''} (${bm25.countByCategory[c]})`).join(' | ')} |`,
    );
    say(`|---|---|---|${categories.map(() => '---').join('|')}|`);
    say(`| BM25 | – | – | ${categories.map((c) => fmt(bm25.byCategory[c]?.[10])).join(' | ')} |`);
    for (const { mode, profile, row } of results) {
      say(
        `| Mnemo | ${mode} | ${profile} | ${categories.map((c) => fmt(row.byCategory[c]?.[10])).join(' | ')} |`,
      );
    }
    const main = results.find((r) => r.mode === 'hybrid' && r.profile === 'balanced') ?? results[0];
    if (main) {
      say();
      say(`Default search (${main.mode}, ${main.profile}) by category:`);
      say();
      say(`| category | questions | ${KS.map((k) => `R@${k}`).join(' | ')} |`);
      say(`|---|---|${KS.map(() => '---').join('|')}|`);
      for (const c of categories) {
        say(
          `| ${c} ${CATEGORY_NAMES[c] ?? ''} | ${main.row.countByCategory[c]} | ${KS.map((k) => fmt(main.row.byCategory[c]?.[k])).join(' | ')} |`,
        );
      }
    }
    foldTables(say, data.questions, data.conversations, results, bm25PerQuestion);
    sessionTable(say);
    if (main) precisionRecall(say, data.questions, main);
    say();
    say(
      'Ingest: lifecycle outcomes of the turn writes. `turn`: one namespace per turn (what the figures above searched); ' +
        '`owner`: every turn of a conversation in one space, as a naive import writes them. "Expired": time-bound wording ' +
        '("today", "this weekend", "right now") dated by effective_at in the past expires on arrival; it stays recallable as history.',
    );
    say();
    say(
      '| space | turns | writes/s | deduped | merged into earlier turn | superseded others | kept as history | memories active / replaced / archived / expired | turns not recallable |',
    );
    say('|---|---|---|---|---|---|---|---|---|');
    for (const r of reports) {
      const s = r.states;
      say(
        `| ${r.space} | ${r.turns} | ${(r.turns / r.seconds).toFixed(0)} | ${r.deduped} | ${r.merged} | ${r.superseded} | ` +
          `${r.keptAsHistory} | ${s.active ?? 0} / ${s.replaced ?? 0} / ${s.archived ?? 0} / ${s.expired ?? 0} | ${r.lost} (${((100 * r.lost) / r.turns).toFixed(1)}%) |`,
      );
    }
    if (process.env.BENCH_LOCOMO_SAVE) {
      const saved = Object.fromEntries(results.map((r) => [r.perQuestion.label, r.perQuestion]));
      writeFileSync(process.env.BENCH_LOCOMO_SAVE, JSON.stringify(saved));
    }
    const text = lines.join('\n') + '\n';
    console.log('\n' + text);
    if (process.env.BENCH_LOCOMO_WRITE !== '0') {
      const dir = join(here, 'results');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `quality-${started.toISOString().slice(0, 10)}.md`), text);
      writeFileSync(join(dir, 'quality-latest.md'), text);
    }
  } finally {
    app.server.close();
    await deps.audit.drain();
    await database.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

type Say = (line?: string) => void;

/** Per-question recalls saved by earlier runs (BENCH_LOCOMO_BASELINE, comma list of files). */
function savedRuns(): QuestionRecalls[] {
  const paths = (process.env.BENCH_LOCOMO_BASELINE ?? '').split(',').filter(Boolean);
  return paths.flatMap((path) =>
    Object.values(JSON.parse(readFileSync(path, 'utf8')) as Record<string, QuestionRecalls>),
  );
}

/**
 * Leave-conversations-out: each conversation's figures as a held-out fold, their mean and the
 * worst beside the full-dev figure; per category for the default search; and, when there is more
 * than one candidate setting of the default mode (this run's profiles, runs saved earlier), which
 * one the other conversations would have chosen and what it got on the held-out one.
 */
function foldTables(
  say: Say,
  questions: Question[],
  conversations: string[],
  results: Array<{ mode: string; profile: string; perQuestion: QuestionRecalls }>,
  bm25: QuestionRecalls,
): void {
  const runs = [bm25, ...results.map((r) => r.perQuestion), ...savedRuns()];
  const of = (conversation: string) => (q: Question) => q.conversation === conversation;
  const all = () => true;
  say();
  say(
    'Leave-conversations-out: R@10 on each conversation as a held-out fold (R@5 mean and worst after), ' +
      'the mean and the worst fold beside the full-dev figure.',
  );
  say();
  say(
    `| retriever | ${conversations.join(' | ')} | R@10 fold mean | R@10 worst | R@10 full dev | R@5 fold mean | R@5 worst | R@5 full dev |`,
  );
  say(`|---|${conversations.map(() => '---').join('|')}|---|---|---|---|---|---|`);
  for (const run of runs) {
    const folds10 = conversations.map((c) => meanRecall(run, questions, 10, of(c)));
    const folds5 = conversations.map((c) => meanRecall(run, questions, 5, of(c)));
    say(
      `| ${run.label} | ${folds10.map(fmt).join(' | ')} | ${fmt(mean(folds10))} | ${fmt(Math.min(...folds10))} | ` +
        `${fmt(meanRecall(run, questions, 10, all))} | ${fmt(mean(folds5))} | ${fmt(Math.min(...folds5))} | ${fmt(meanRecall(run, questions, 5, all))} |`,
    );
  }
  const main = results.find((r) => r.mode === 'hybrid' && r.profile === 'balanced') ?? results[0];
  if (!main) return;
  const categories = [...new Set(questions.map((q) => q.category))].sort();
  say();
  say(
    'R@10 by category, leave-conversations-out (fold mean / worst fold / full dev); a fold without questions of a category is left out of its mean.',
  );
  say();
  say(`| retriever | ${categories.map((c) => `${c} ${CATEGORY_NAMES[c] ?? ''}`).join(' | ')} |`);
  say(`|---|${categories.map(() => '---').join('|')}|`);
  for (const run of [bm25, ...results.map((r) => r.perQuestion)]) {
    const cells = categories.map((category) => {
      const folds = conversations
        .map((c) =>
          meanRecall(run, questions, 10, (q) => q.conversation === c && q.category === category),
        )
        .filter((value) => !Number.isNaN(value));
      const full = meanRecall(run, questions, 10, (q) => q.category === category);
      return `${fmt(mean(folds))} / ${fmt(Math.min(...folds))} / ${fmt(full)}`;
    });
    say(`| ${run.label} | ${cells.join(' | ')} |`);
  }
  const family = runs.filter((run) => run.label.includes(`:${main.mode}/`));
  const candidates = [main.perQuestion, ...family.filter((run) => run !== main.perQuestion)];
  if (candidates.length < 2) return;
  const folds = leaveOneOut(candidates, questions, conversations);
  say();
  say(
    `Setting chosen on the other conversations (best R@10 among ${candidates.map((c) => c.label).join(', ')}), reported on the held-out one:`,
  );
  say();
  say('| held out | chosen on the others | its R@10 there | held-out R@5 | held-out R@10 |');
  say('|---|---|---|---|---|');
  for (const fold of folds) {
    say(
      `| ${fold.heldOut} | ${fold.chosen} | ${fmt(fold.tunedR10)} | ${fmt(fold.heldOut5)} | ${fmt(fold.heldOut10)} |`,
    );
  }
  const held10 = folds.map((fold) => fold.heldOut10);
  const held5 = folds.map((fold) => fold.heldOut5);
  say(
    `| **mean / worst** | | | ${fmt(mean(held5))} / ${fmt(Math.min(...held5))} | ${fmt(mean(held10))} / ${fmt(Math.min(...held10))} |`,
  );
}

/**
 * What `min_score` keeps, for the default search: over the questions with evidence, precision is
 * the share of the results scoring at least the threshold (within the first page of 50) that are
 * evidence turns, recall the share of the evidence turns among them. A question has one to a few
 * evidence turns, so precision stays low at any threshold; what matters is how it moves.
 */
function precisionRecall(
  say: Say,
  questions: Question[],
  run: { mode: string; profile: string; scored: Array<Array<{ ids: string[]; score: number }>> },
): void {
  say();
  say(
    `min_score on the default search (${run.mode}, ${run.profile}): precision and recall of the results at or above it ` +
      '(questions with evidence; results within the first 50), and results kept per question.',
  );
  say();
  say(
    '| min_score | precision | recall | results kept per question | questions with nothing kept |',
  );
  say('|---|---|---|---|---|');
  for (const threshold of [0, ...THRESHOLDS]) {
    let kept = 0;
    let relevant = 0;
    let evidence = 0;
    let found = 0;
    let empty = 0;
    let counted = 0;
    questions.forEach((question, i) => {
      if (question.evidence.length === 0) return;
      counted += 1;
      const hits = (run.scored[i] ?? []).filter((hit) => hit.score >= threshold);
      const wanted = new Set(question.evidence);
      const ids = new Set(hits.flatMap((hit) => hit.ids));
      kept += hits.length;
      relevant += hits.filter((hit) => hit.ids.some((id) => wanted.has(id))).length;
      evidence += wanted.size;
      found += [...wanted].filter((id) => ids.has(id)).length;
      if (hits.length === 0) empty += 1;
    });
    say(
      `| ${threshold.toFixed(1)} | ${fmt((100 * relevant) / Math.max(1, kept))} | ${fmt((100 * found) / Math.max(1, evidence))} | ` +
        `${(kept / Math.max(1, counted)).toFixed(1)} | ${empty} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

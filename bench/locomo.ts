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
 * skips it).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
import { createLogger } from '../server/src/logger.js';
import { Bm25Index } from './locomo-bm25.js';
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
const SPACE = (process.env.BENCH_LOCOMO_SPACE ?? 'turn') as 'turn' | 'session' | 'owner';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
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
      const { port } = server.address() as AddressInfo;
      done({ server, base: `http://127.0.0.1:${port}` });
    });
  });
}

async function post<T>(url: string, key: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
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
  /** Turns whose own text is not an active, unexpired memory after the ingest. */
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
        .where(
          and(
            eq(memories.workspaceId, workspaceId),
            eq(memories.lifecycleState, 'active'),
            sql`(${memories.expiresAt} is null or ${memories.expiresAt} > now())`,
          ),
        );
      const liveDia = new Set(
        live.map((row) => memoryToDia.get(row.id)).filter((id): id is string => id !== undefined),
      );
      report.lost = data.turns.filter(
        (turn) => !liveDia.has(`${turn.conversation}/${turn.diaId}`),
      ).length;
      return { memoryToDia, report };
    };

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
    const bm25 = summarise(
      data.questions,
      data.questions.map((q) =>
        indexes
          .get(q.conversation)!
          .search(q.question, DEPTH)
          .map((id) => [id]),
      ),
    );

    /** Every question through POST /v1/search; the evidence turns each answer holds, best first. */
    const searchAll = async (
      mode: (typeof MODES)[number],
      profile: (typeof PROFILES)[number],
      apiKey: string,
      diaOf: Map<string, string>,
    ) => {
      const t1 = performance.now();
      const ranked = await pool(data.questions, CONCURRENCY, async (question: Question) => {
        const response = await post<{ results: Array<{ memory_id: string }> }>(
          `${app.base}/v1/search`,
          apiKey,
          {
            user_id: owner(question.conversation),
            query: question.question,
            search_mode: mode,
            retrieval_profile: profile,
            page_size: DEPTH,
          },
        );
        return response.results.map((hit) => {
          const dia = diaOf.get(hit.memory_id);
          return dia ? [dia.slice(question.conversation.length + 1)] : [];
        });
      });
      const ms = (performance.now() - t1) / data.questions.length;
      return { mode, profile, row: summarise(data.questions, ranked), ms };
    };

    const results: Array<{ mode: string; profile: string; row: RecallRow; ms: number }> = [];
    for (const mode of MODES) {
      for (const profile of PROFILES) {
        results.push(await searchAll(mode, profile, key, memoryToDia));
        console.error(`  ${mode}/${profile}: R@10 ${fmt(results.at(-1)!.row.overall[10])}`);
      }
    }
    const naiveResult = naiveImport
      ? await searchAll('hybrid', 'balanced', naiveImport.key, naiveImport.memoryToDia)
      : undefined;
    if (naiveResult)
      console.error(`  owner space, hybrid/balanced: R@10 ${fmt(naiveResult.row.overall[10])}`);
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
    say();
    say(
      'Ingest: lifecycle outcomes of the turn writes. `turn`: one namespace per turn (what the figures above searched); ' +
        '`owner`: every turn of a conversation in one space, as a naive import writes them. "Expired": time-bound wording ' +
        '("today", "this weekend", "right now") dated by effective_at in the past expires on arrival.',
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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { capabilityRecovered, capabilityUnavailable } from '../degraded.js';
import type { SearchPayload, SearchResultItem } from '@mnemo/contract';
import type { Reader, Writer } from '../../db/client.js';
import type { RecallFilter, RecalledChunk } from '../../db/queries/recall.js';
import {
  searchRecall,
  type SearchRecall,
  type SearchRecallRequest,
} from '../../db/queries/search-recall.js';
import { insertLearningSignals, insertSavedSearch } from '../../db/queries/signals.js';
import { ServiceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { EmbeddingError, type EmbeddingProvider } from '../../providers/embeddings/index.js';
import type { Reranker } from '../../providers/rerank/types.js';
import { estimateTokens } from '../ai-cost.js';
import type { BackgroundTasks } from '../background.js';
import type { QuotaGate } from '../quota.js';
import { asksAboutTime } from '../../text/temporal.js';
import { timeWindowOf } from '../../text/time-window.js';
import { resolveOwner } from '../owner.js';
import { EPISODE_SPAN, addEpisodeContext } from './episodes.js';
import {
  PROFILES,
  addFurtherChunks,
  applyFactor,
  blendRerank,
  byScore,
  candidateTokens,
  evidence,
  fuse,
  fusionWeights,
  historyFactor,
  memoryFactor,
  queryStems,
  relevance,
  stemCoverage,
  timeReference,
  timeWindowFactor,
  type Candidate,
  type ProfileSettings,
  type SearchMode,
} from './ranking.js';

/** Results per page when the request sets neither page_size nor top_k. */
export const DEFAULT_PAGE_SIZE = 10;

export interface SearchDeps {
  /** Recall and everything else a search reads. */
  reader: Reader;
  /** Its learning signals and saved history. */
  writer: Writer;
  embeddings: EmbeddingProvider;
  /** Undefined: no rerank step. */
  reranker: Reranker | undefined;
  background: BackgroundTasks;
  logger: Logger;
  /** Operator setting: attach `_explain` to every result. */
  explain: boolean;
  /** Operator setting: episode window for episode context (0: off). See addEpisodeContext. */
  episodeWindowSeconds: number;
  /** Meters the read (and the query's embedding) against the workspace's plan. */
  quota: QuotaGate;
}

export interface SearchRequest {
  workspaceId: string;
  requestId: string;
  route: 'search' | 'context';
  payload: SearchPayload;
  saveHistory?: boolean;
  /**
   * Attach `_explain` for this request. The spec has search accept `explain` without honouring
   * it; only the console's playground (a dashboard session) is given the explanation.
   */
  explain?: boolean;
}

export interface SearchOutcome {
  results: SearchResultItem[];
  /** The ranked candidates of this page, in order (context assembly reads them). */
  hits: Candidate[];
  page: number;
  page_size: number;
  total: number;
  has_more: boolean;
  filter: RecallFilter;
  queryEmbedding: number[] | undefined;
  queryTerms: Set<string>;
}

export function recallFilter(workspaceId: string, payload: SearchPayload): RecallFilter {
  const filters = payload.filters ?? {};
  const types = filters.memory_type === undefined ? undefined : [filters.memory_type].flat();
  return {
    workspaceId,
    ...resolveOwner(payload),
    ...(payload.scope !== undefined ? { scope: payload.scope } : {}),
    ...(payload.namespace !== undefined ? { namespace: payload.namespace } : {}),
    ...(payload.containerTag !== undefined ? { containerTag: payload.containerTag } : {}),
    ...(types ? { memoryTypes: types } : {}),
    ...(filters.metadata
      ? { metadata: filters.metadata, metadataMode: filters.filter_mode ?? 'and' }
      : {}),
    ...(filters.start_time ? { effectiveFrom: new Date(filters.start_time) } : {}),
    ...(filters.end_time ? { effectiveTo: new Date(filters.end_time) } : {}),
    // Expired memories are history, not current truth, but still the answer to a question
    // about their own time: every search recalls them, and ranking demotes them unless the
    // search is about a time (see historyFactor).
    history: true,
  };
}

/** A question about a time, or a search within a time window: history ranks as current truth. */
function searchIsAboutTime(payload: SearchPayload): boolean {
  const filters = payload.filters ?? {};
  return asksAboutTime(payload.query) || !!filters.start_time || !!filters.end_time;
}

async function embedQuery(
  deps: SearchDeps,
  query: string,
  mode: SearchMode,
): Promise<number[] | undefined> {
  if (mode === 'keyword') return undefined;
  try {
    const [vector] = await deps.embeddings.embed([query], 'query');
    return vector;
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    if (mode === 'vector')
      throw new ServiceError('INTERNAL', `Query embedding failed: ${error.message}`);
    // Hybrid degrades to keyword recall rather than failing the search.
    deps.logger.warn(
      { err: error },
      'query embedding failed; hybrid search falls back to keyword recall',
    );
    return undefined;
  }
}

async function rerank(
  deps: SearchDeps,
  query: string,
  candidates: Candidate[],
  profile: ProfileSettings,
): Promise<void> {
  if (!deps.reranker || candidates.length === 0) return;
  const ranked = [...candidates].sort((a, b) => b.relevance - a.relevance);
  const top = ranked.slice(0, profile.rerankTop);
  try {
    const scores = await deps.reranker.rerank(
      query,
      top.map((candidate) => candidate.text),
      { tokensOf: (index) => candidateTokens(top[index]!) },
    );
    blendRerank(ranked, scores, profile.rerankWeight);
  } catch (error) {
    deps.logger.warn(
      { err: error, reranker: deps.reranker.name },
      'rerank failed; results keep their fused order',
    );
  }
}

/**
 * The recalls and, for episode context, the neighbours of the likely seeds, in one statement (one
 * round trip). Retrieval attributes (episode neighbours) are optional: when that statement fails,
 * the recalls run again without them and the search goes on with its direct matches; only when
 * that fails too does the search fail (as when its recalls fail).
 */
async function recall(
  deps: SearchDeps,
  filter: RecallFilter,
  request: SearchRecallRequest,
): Promise<SearchRecall> {
  if (!request.episodes) return searchRecall(deps.reader, filter, request);
  try {
    const found = await searchRecall(deps.reader, filter, request);
    capabilityRecovered(deps.logger, EPISODE_CONTEXT);
    return found;
  } catch (error) {
    const { episodes: _episodes, ...direct } = request;
    const found = await searchRecall(deps.reader, filter, direct);
    capabilityUnavailable(deps.logger, EPISODE_CONTEXT, error);
    return found;
  }
}
const EPISODE_CONTEXT = 'retrieval attributes (episode context)';

/**
 * Word-overlap evidence per candidate. Keyword recall measured it with IDF weights over the
 * owner's memories (a rare word found counts more than a common one); a candidate it did not
 * return holds at most what its weakest returned chunk holds when the list was cut at the limit,
 * and nothing the index would match otherwise. Without keyword recall (vector mode, or a query of
 * stopwords only) the plain share of query words stands in.
 */
function lexicalEvidence(
  textHits: RecalledChunk[],
  limit: number,
  queryTerms: Set<string>,
): (candidate: Candidate) => number {
  const coverage = (candidate: Candidate) =>
    stemCoverage(queryTerms, candidateTokens(candidate).stems);
  if (textHits.length === 0) return coverage;
  const byChunk = new Map(textHits.map((hit) => [hit.chunkId, hit.coverage ?? 0]));
  const ceiling = textHits.length >= limit ? Math.min(...byChunk.values()) : 0;
  // A ceiling of 0 leaves nothing to measure: such a candidate holds 0 whatever its words.
  if (ceiling === 0) return (candidate) => byChunk.get(candidate.chunkId) ?? 0;
  return (candidate) => byChunk.get(candidate.chunkId) ?? Math.min(ceiling, coverage(candidate));
}

/**
 * One result per fact: a memory and the memories extracted from it ("Jane moved to Berlin. Reach
 * her at jane@example.com" and its two children) say the same thing, so they come back once, as
 * their best-scoring member, with the other members that matched as `related` (each by its best
 * chunk). `ranked` must be in score order.
 */
export function oneResultPerFact(ranked: Candidate[]): Candidate[] {
  const byFact = new Map<string, Candidate>();
  const seenMemories = new Set<string>();
  const results: Candidate[] = [];
  for (const candidate of ranked) {
    if (seenMemories.has(candidate.memoryId)) continue;
    seenMemories.add(candidate.memoryId);
    const fact = candidate.parentMemoryId ?? candidate.memoryId;
    const best = byFact.get(fact);
    if (best) (best.related ??= []).push(candidate);
    else {
      byFact.set(fact, candidate);
      results.push(candidate);
    }
  }
  return results;
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

function toResult(candidate: Candidate, explain: boolean): SearchResultItem {
  const item: SearchResultItem = {
    chunk_id: candidate.chunkId,
    memory_id: candidate.memoryId,
    chunk_index: candidate.chunkIndex,
    text: candidate.text,
    score: round(candidate.score),
  };
  if (candidate.related)
    item.related = candidate.related.map((member) => ({
      chunk_id: member.chunkId,
      memory_id: member.memoryId,
      chunk_index: member.chunkIndex,
      text: member.text,
      score: round(member.score),
    }));
  if (explain) {
    item._explain = {
      rrf_score: round(candidate.rrfScore),
      match_sources: [
        ...(candidate.vectorRank !== undefined ? (['vector'] as const) : []),
        ...(candidate.textRank !== undefined ? (['text'] as const) : []),
      ],
      ...(candidate.vectorScore !== undefined
        ? { vector_score: round(candidate.vectorScore) }
        : {}),
      ...(candidate.textScore !== undefined ? { text_score: round(candidate.textScore) } : {}),
    };
  }
  return item;
}

/**
 * Hybrid search: recall (vector and/or keyword, per `search_mode`) → fusion → relevance
 * (weighted recall scores + direct evidence) → optional rerank → episode context (hybrid) →
 * lifecycle and learning factors → one result per fact → min_score → page. Records the implicit learning signal in the background.
 */
/**
 * A search (or the search of a context call), metered: one read, and one embedding of the query
 * unless the search is keyword-only. The reservation runs beside the search (another connection)
 * rather than before it, so metering adds no round trip to the response: a search the plan
 * refuses (`CAP_EXCEEDED`, `TRIAL_EXPIRED`, ...) returns nothing and records no signal. The
 * reservation is settled off the response path.
 */
export async function searchMemories(
  deps: SearchDeps,
  request: SearchRequest,
): Promise<SearchOutcome> {
  const keywordOnly = request.payload.search_mode === 'keyword';
  const [reserved, searched] = await Promise.allSettled([
    deps.quota.reserve({
      workspaceId: request.workspaceId,
      reads: 1,
      ...(keywordOnly ? {} : { embeds: 1, embedTokens: estimateTokens(request.payload.query) }),
    }),
    rankedSearch(deps, request),
  ]);
  if (reserved.status === 'rejected') throw reserved.reason;
  const reservation = reserved.value;
  if (searched.status === 'rejected') {
    deps.background.run('usage release', () => reservation.release());
    throw searched.reason;
  }
  const outcome = searched.value;
  recordSignals(deps, request, outcome.filter, outcome.results, outcome.page, outcome.page_size);
  deps.background.run('usage commit', () => reservation.commit());
  return outcome;
}

async function rankedSearch(deps: SearchDeps, request: SearchRequest): Promise<SearchOutcome> {
  const { payload } = request;
  const mode: SearchMode = payload.search_mode ?? 'hybrid';
  const profile = PROFILES[payload.retrieval_profile ?? 'balanced'];
  const filter = recallFilter(request.workspaceId, payload);

  const queryEmbedding = await embedQuery(deps, payload.query, mode);
  // Episode context belongs to hybrid search: keyword and vector modes return direct matches only.
  const episodeWindow = mode === 'hybrid' ? deps.episodeWindowSeconds : 0;
  const episodes =
    episodeWindow > 0 && profile.episodeShare > 0
      ? { windowSeconds: episodeWindow, span: EPISODE_SPAN, seedsPerRecall: profile.episodeSeeds }
      : undefined;
  const {
    vector: vectorHits,
    text: textHits,
    neighbours,
  } = await recall(deps, filter, {
    ...(queryEmbedding ? { embedding: queryEmbedding } : {}),
    ...(mode !== 'vector' ? { query: payload.query } : {}),
    limit: profile.recallLimit,
    ...(episodes ? { episodes } : {}),
  });

  // A hybrid search whose keyword recall found nothing has only meaning to go on: it ranks as
  // vector search does, so "musical instrument" finds "plays the cello" as vector mode would,
  // instead of weighing its only evidence down to what a repeat of keyword recall is worth.
  const meaningOnly = mode === 'hybrid' && queryEmbedding !== undefined && textHits.length === 0;
  const weights = fusionWeights(
    meaningOnly ? 'vector' : mode,
    queryEmbedding !== undefined,
    deps.embeddings.fusionWeight,
  );
  const queryTerms = queryStems(payload.query);
  const lexical = lexicalEvidence(textHits, profile.recallLimit, queryTerms);
  const candidates = fuse(vectorHits, textHits, weights.vector).filter((candidate) => {
    candidate.wordCoverage = lexical(candidate);
    candidate.relevance = relevance(candidate, weights);
    return evidence(candidate, weights.evidence) >= profile.minEvidence;
  });
  await rerank(deps, payload.query, candidates, profile);
  addFurtherChunks(candidates);
  const withContext = neighbours
    ? addEpisodeContext(neighbours, candidates, profile, episodeWindow)
    : candidates;

  const now = Date.now();
  const aboutTime = searchIsAboutTime(payload);
  const window = timeWindowOf(payload.query, timeReference(withContext, now));
  for (const candidate of withContext) {
    candidate.score = applyFactor(
      candidate.relevance,
      memoryFactor(candidate, now) *
        historyFactor(candidate, now, aboutTime) *
        timeWindowFactor(candidate, window),
    );
  }
  const minScore = payload.min_score ?? profile.defaultMinScore;
  const ranked = oneResultPerFact(withContext.sort(byScore)).filter(
    (candidate) => candidate.score >= minScore,
  );

  const page = payload.page ?? 1;
  const pageSize = payload.page_size ?? payload.top_k ?? DEFAULT_PAGE_SIZE;
  const hits = ranked.slice((page - 1) * pageSize, page * pageSize);
  const results = hits.map((candidate) =>
    toResult(candidate, deps.explain || request.explain === true),
  );

  return {
    results,
    hits,
    page,
    page_size: pageSize,
    total: ranked.length,
    has_more: page * pageSize < ranked.length,
    filter,
    queryEmbedding,
    queryTerms,
  };
}

function recordSignals(
  deps: SearchDeps,
  request: SearchRequest,
  filter: RecallFilter,
  results: SearchResultItem[],
  page: number,
  pageSize: number,
): void {
  const offset = (page - 1) * pageSize;
  deps.background.batch(
    'learning signals',
    {
      // The time of the search, not of the batch: the latest signal of a request id wins.
      createdAt: new Date(),
      workspaceId: request.workspaceId,
      requestId: request.requestId,
      route: request.route,
      ownerId: filter.ownerId,
      ownerType: filter.ownerType,
      query: request.payload.query,
      results: results.map((result, i) => ({
        memoryId: result.memory_id,
        chunkId: result.chunk_id,
        rank: offset + i + 1,
        score: result.score,
      })),
    },
    (signals) => insertLearningSignals(deps.writer, signals),
  );
  if (request.saveHistory) {
    deps.background.run('search history', () =>
      insertSavedSearch(deps.writer, {
        workspaceId: request.workspaceId,
        requestId: request.requestId,
        ownerId: filter.ownerId,
        ownerType: filter.ownerType,
        query: request.payload.query,
        payload: request.payload as Record<string, unknown>,
      }),
    );
  }
}

import type {
  HealthResponse,
  MemoryHygieneReport,
  ReadyResponse,
  VersionedHealthResponse,
  MemoryRetentionReport,
  ScheduledJobsReport,
} from '@mnemo/contract';
import type { AppConfig } from '../config.js';
import type { Reader, Writer } from '../db/client.js';
import type { EventOutbox } from '../db/queries/events.js';
import type { NewAuditRecord } from '../db/schema/index.js';
import type { Logger } from '../logger.js';
import type { EmbeddingProvider } from '../providers/embeddings/index.js';
import type { Extractor } from '../providers/extraction/index.js';
import type { Reranker } from '../providers/rerank/index.js';
import type { ApiKeyService } from '../services/api-keys/index.js';
import type { KeyAdminDeps } from '../services/api-keys/admin.js';
import type { BackgroundTasks } from '../services/background.js';
import type { BillingService } from '../services/billing.js';
import type { DashboardDeps } from '../services/dashboard/index.js';
import type { DashboardIdentity } from '../services/dashboard/identity.js';
import type { DashboardSessions, SessionContext } from '../services/dashboard/sessions.js';
import type { MemoryWriteDeps } from '../services/memory-write/index.js';
import type { PlanService } from '../services/plans.js';
import type { QuotaGate } from '../services/quota.js';
import type { SearchDeps } from '../services/retrieval/search.js';
import type { SecretBox } from '../services/webhooks/secrets.js';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * What operations run with: the storage ports, the meter, the providers and the few settings
 * that change what they do. Built once by the composition root; each operation states by its
 * signature the part it uses.
 */
export interface OperationContext {
  reader: Reader;
  writer: Writer;
  /** Plan quotas: a service reserves before the costly work and settles after. */
  quota: QuotaGate;
  /**
   * Where operations and jobs emit domain events: each `emit` writes into the transaction it is
   * handed, so an event is stored exactly when its change is.
   */
  events: EventOutbox;
  /** Each workspace's effective plan (cached briefly). */
  plans: PlanService;
  /** Payments and entitlements. */
  billing: BillingService;
  /** Operator maintenance (hygiene, retention, session cleanup). */
  maintenance: Maintenance;
  /** What liveness and readiness report (the version, the provider, the dependency probes). */
  health: HealthProbe;
  /** Mints, hashes and forgets API keys (a revoked key leaves every instance's cache). */
  apiKeys: ApiKeyService;
  /** The console's sign-in: who a token names, the sessions, and what one user may own. */
  console: ConsoleAccounts;
  clock: Clock;
  logger: Logger;
  embeddings: EmbeddingProvider;
  /** Undefined: no rerank step. */
  reranker: Reranker | undefined;
  /** Undefined: extraction is off. */
  extractor: Extractor | undefined;
  /** Learning signals and search history, off the response path. */
  background: BackgroundTasks;
  settings: {
    dedupe: AppConfig['dedupe'];
    metadataMaxBytes: AppConfig['metadataMaxBytes'];
    /** Attach `_explain` to every search result (an operator setting). */
    searchExplain: boolean;
    episodeWindowSeconds: number;
    /** `MNEMO_LIMITS`: off reports consumption without limits or alerts. */
    limitsEnabled: boolean;
  };
  /** Seals and opens webhook signing secrets. */
  webhookSecrets: SecretBox;
  /** Webhook endpoints may resolve to loopback and private addresses (an operator setting). */
  webhooksAllowPrivate: boolean;
  /** Told how many rows a committed write added, to keep planner statistics fresh. */
  onRowsWritten(rows: number): void;
}

/** The console's accounts, as the dashboard operations use them. */
export interface ConsoleAccounts {
  identity: DashboardIdentity;
  sessions: DashboardSessions;
  /** What one user may own through the console. */
  counts: { workspacesPerUser: number; keysPerWorkspace: number };
}

/** How a tenant caller was authenticated: the door decides, the operation's policy checks. */
export type CallerVia = 'api_key' | 'session' | 'internal';

/**
 * Who calls an operation and what the carrying request says besides its input, the same for
 * REST and MCP: both doors build it from the HTTP request.
 */
export interface Caller {
  door: 'rest' | 'mcp';
  workspaceId: string;
  /** The API key; null for a dashboard session or an internal subrequest. */
  apiKeyId: string | null;
  via: CallerVia;
  /** The API key's scope (`admin` keys may create workspaces); absent without a key. */
  keyScope?: 'tenant' | 'admin';
  /** The `x-request-id`: keys learning signals; feedback names it. */
  requestId: string;
  /** `x-save-history: 1` or `true`: a search stores its query in the saved history. */
  saveHistory: boolean;
  /** `x-safety-pii-scan: 1`: a write reports the email and phone hints it finds. */
  piiScan: boolean;
  /**
   * Read-your-writes across read replicas (docs/scaling.md); absent: reads and writes as they come.
   */
  consistency?: CallerConsistency;
  /** Where the call came in, for its audit record. */
  origin: {
    path: string;
    ip: string | null;
    userAgent: string | null;
    /** `process.hrtime.bigint()` when the carrying request arrived. */
    startedAt: bigint;
  };
  /** Told that the operation's audit record is written: the door writes none for the request. */
  audited(): void;
}

/** What a caller says about read replicas, and how it hears a write's consistency token. */
export interface CallerConsistency {
  /** The consistency token the request carried: its reads must see that write. */
  readAfter: string | undefined;
  /**
   * Reads without a token go to the primary: the MCP door, whose clients have no way to send a
   * token back, so an agent's search always sees the memory it just wrote.
   */
  primaryWithoutToken: boolean;
  /** Told the consistency token of the write the operation made (the REST door sends it). */
  issued(token: string): void;
}

/**
 * Where reads go when the server has read replicas: a port of the composition root's
 * {@link ReadReplicas}, so operations never see the replicas themselves.
 */
export interface ReadRouting {
  /** The reader for one read operation: a replica past `after` (a token), or the primary. */
  readerFor(after: string | undefined, primaryWithoutToken: boolean): Promise<Reader>;
  /** The consistency token of every write committed so far. */
  writePosition(): Promise<string>;
  /** A read failed on `reader`: a replica that lost its connection is skipped. */
  noteFailure(reader: Reader, error: unknown): void;
}

/**
 * An operator's call (admin token, checked by the door's guard): no workspace and no key. It is
 * audited like any other call.
 */
export interface OperatorCaller {
  door: 'rest';
  workspaceId: null;
  apiKeyId: null;
  via: 'admin_token';
  requestId: string;
  /** Operator calls read and write on the primary: no consistency token either way. */
  consistency?: undefined;
  origin: Caller['origin'];
  audited(): void;
}

/**
 * A console user signed in to one workspace (the session cookie, and CSRF on unsafe methods, both
 * checked by the door). It acts for the session's workspace, without a key.
 */
export interface DashboardSessionCaller {
  door: 'rest';
  workspaceId: string;
  apiKeyId: null;
  via: 'dashboard_session';
  /** The session the cookie stands for: its user, workspace and expiry. */
  session: SessionContext;
  requestId: string;
  consistency?: undefined;
  origin: Caller['origin'];
  audited(): void;
}

/**
 * Someone presenting an identity-provider token in the body (console bootstrap and sign-in): the
 * operation verifies the token itself; until then the caller names no workspace.
 */
export interface DashboardTokenCaller {
  door: 'rest';
  workspaceId: null;
  apiKeyId: null;
  via: 'dashboard_token';
  requestId: string;
  consistency?: undefined;
  origin: Caller['origin'];
  audited(): void;
}

/**
 * A caller with no workspace and no key: a public probe (health, readiness), or the payment
 * provider, whose signature over the callback the door has verified.
 */
export interface AnonymousCaller {
  door: 'rest';
  workspaceId: null;
  apiKeyId: null;
  via: 'public' | 'payment_callback';
  requestId: string;
  consistency?: undefined;
  origin: Caller['origin'];
  audited(): void;
}

/**
 * Whoever may call an operation: a tenant (key, session, internal subrequest), a console user
 * (session or sign-in token), an operator, or an anonymous caller (public probe, payment provider).
 */
export type AnyCaller =
  Caller | OperatorCaller | DashboardSessionCaller | DashboardTokenCaller | AnonymousCaller;

/** Liveness and readiness, built by the composition root over the process's dependencies. */
export interface HealthProbe {
  health(): HealthResponse;
  versionedHealth(): VersionedHealthResponse;
  /** Probes the database, the key salt and Redis (each bounded); not ready while draining. */
  readiness(): Promise<ReadyResponse>;
}

/**
 * Operator maintenance that the scheduled jobs run too, handed to the operations by the composition
 * root (the jobs sit above the operations).
 */
export interface Maintenance {
  hygiene(options: {
    dryRun: boolean;
    limit: number;
    workspaceId?: string;
  }): Promise<MemoryHygieneReport>;
  retention(options: {
    dryRun: boolean;
    limit: number;
    workspaceId?: string;
  }): Promise<MemoryRetentionReport>;
  /** Every scheduled job's schedule with its last recorded run. */
  scheduledJobs(): Promise<ScheduledJobsReport>;
  /** Deletes expired dashboard sessions; how many. */
  cleanupSessions(): Promise<number>;
}

/**
 * An operation's audit record before its outcome: the one shape both doors produce, built by the
 * policy wrapper. A write stores it in its own transaction; anything else is recorded once the
 * operation ends, with its status.
 */
export type AuditDraft = Pick<
  NewAuditRecord,
  'requestId' | 'workspaceId' | 'apiKeyId' | 'method' | 'path' | 'route' | 'ip' | 'userAgent'
> & { startedAt: bigint };

/** The write pipeline's ports, from the context. */
export function writePorts(
  ctx: Pick<
    OperationContext,
    'writer' | 'embeddings' | 'quota' | 'extractor' | 'settings' | 'onRowsWritten'
  >,
): MemoryWriteDeps {
  return {
    db: ctx.writer,
    embeddings: ctx.embeddings,
    quota: ctx.quota,
    config: {
      dedupe: ctx.settings.dedupe,
      metadataMaxBytes: ctx.settings.metadataMaxBytes,
      episodeWindowSeconds: ctx.settings.episodeWindowSeconds,
    },
    extractor: ctx.extractor,
    onRowsWritten: ctx.onRowsWritten,
  };
}

export type WriteContext = Parameters<typeof writePorts>[0];

/** Search and context's ports, from the context. */
export function searchPorts(
  ctx: Pick<
    OperationContext,
    'reader' | 'writer' | 'embeddings' | 'reranker' | 'background' | 'logger' | 'settings' | 'quota'
  >,
): SearchDeps {
  return {
    // Recall reads from the reader; learning signals and saved history go to the writer.
    reader: ctx.reader,
    writer: ctx.writer,
    embeddings: ctx.embeddings,
    reranker: ctx.reranker,
    background: ctx.background,
    logger: ctx.logger,
    explain: ctx.settings.searchExplain,
    episodeWindowSeconds: ctx.settings.episodeWindowSeconds,
    quota: ctx.quota,
  };
}

export type SearchContext = Parameters<typeof searchPorts>[0];

/** The console's services over the context's ports. */
export function dashboardPorts(
  ctx: Pick<OperationContext, 'writer' | 'apiKeys' | 'console' | 'plans' | 'settings'>,
): DashboardDeps {
  return {
    db: ctx.writer,
    identity: ctx.console.identity,
    sessions: ctx.console.sessions,
    apiKeys: ctx.apiKeys,
    // The Overview shows the plan `GET /v1/usage/today` shows.
    usage: { db: ctx.writer, plans: ctx.plans, limitsEnabled: ctx.settings.limitsEnabled },
    counts: ctx.console.counts,
  };
}

export type DashboardContext = Parameters<typeof dashboardPorts>[0];

/** API-key administration over the context's ports. */
export function keyAdminPorts(
  ctx: Pick<OperationContext, 'writer' | 'apiKeys' | 'logger'>,
): KeyAdminDeps {
  return { db: ctx.writer, apiKeys: ctx.apiKeys, logger: ctx.logger };
}

export type KeyAdminContext = Parameters<typeof keyAdminPorts>[0];

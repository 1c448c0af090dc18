/**
 * A load-and-fault run against a started server on PostgreSQL, shared by the fault test
 * (`db-faults.test.ts`) and the bench (`bench/faults.ts`). Free of vitest so the bench can run it.
 *
 * The server reaches PostgreSQL through {@link FaultProxy}, a TCP proxy on loopback, so a
 * "restart" (connections reset and refused) and a network black hole can be staged without
 * touching the shared PostgreSQL server; terminated backends and a held table lock are staged in
 * PostgreSQL itself from a separate connection.
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import postgres from 'postgres';

type ProxyMode = 'pass' | 'down' | 'blackhole';

/** A TCP proxy to PostgreSQL whose link can be cut (`down`) or made silent (`blackhole`). */
export class FaultProxy {
  private mode: ProxyMode = 'pass';
  private readonly pairs = new Set<[Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** A proxy in front of the database at `databaseUrl`, and the URL that reaches it through it. */
  static async before(databaseUrl: string): Promise<{ proxy: FaultProxy; url: string }> {
    const target = new URL(databaseUrl);
    const proxy = await FaultProxy.start({
      host: target.hostname,
      port: Number(target.port || 5432),
    });
    const viaProxy = new URL(databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    return { proxy, url: viaProxy.toString() };
  }

  static async start(target: { host: string; port: number }): Promise<FaultProxy> {
    const accept: { to?: FaultProxy } = {};
    const server = createServer((client) => accept.to?.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('proxy has no port');
    accept.to = new FaultProxy(server, address.port);
    return accept.to;
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (this.mode === 'down') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    // Bytes are dropped, not queued, in a black hole: the sockets are reset when it ends.
    client.on('data', (chunk) => this.mode === 'pass' && upstream.write(chunk));
    upstream.on('data', (chunk) => this.mode === 'pass' && client.write(chunk));
    const close = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) {
      socket.on('error', close);
      socket.on('close', close);
    }
  }

  /** Resets every open link (as a restarting server does); `down` refuses new ones until `pass`. */
  set(mode: ProxyMode): void {
    const wasSilent = this.mode === 'blackhole';
    this.mode = mode;
    if (mode === 'down' || (mode === 'pass' && wasSilent)) {
      for (const [client, upstream] of this.pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      this.pairs.clear();
    }
  }

  async close(): Promise<void> {
    this.set('down');
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export type FaultName = 'terminate' | 'lock' | 'restart' | 'blackhole';

export interface FaultWindow {
  name: FaultName;
  /** ms since the run started. */
  start: number;
  end: number;
}

export interface RequestRecord {
  kind: 'write' | 'search';
  /** HTTP status; 0 when no answer came before the client gave up. */
  status: number;
  /** ms since the run started. */
  start: number;
  ms: number;
  code?: string;
  /** `details.outcome` of a 503: `unknown` when a write may have committed. */
  outcome?: string;
  memoryId?: string;
  retryAfter?: string | null;
  /** The server's request id (x-request-id), to find the request in its log. */
  requestId?: string | null;
}

export interface ScenarioOptions {
  baseUrl: string;
  apiKey: string;
  /** A connection to the server's database that is not the server's (terminate, lock, count). */
  controlUrl: string;
  /** The server's database name, to find its backends. */
  database: string;
  proxy: FaultProxy;
  faults: FaultName[];
  /** Concurrent clients, each alternating writes and searches. */
  concurrency?: number;
  /** Load before the first fault, and after each (the recovery window). */
  calmMs?: number;
  /** How long each fault lasts (the lock is held, the link is down or silent). */
  faultMs?: number;
  /** A client gives up on a request after this long (then it counts as a hang, status 0). */
  clientTimeoutMs?: number;
  /** Unique text per run, so a log scan can look for it. */
  marker?: string;
}

export interface ScenarioResult {
  records: RequestRecord[];
  windows: FaultWindow[];
  durationMs: number;
  /** Distinct memory_ids of writes answered 200. */
  acknowledged: string[];
  /** How many of those are rows in `memories` after the run. */
  present: number;
  marker: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the load, stages each fault in turn with calm load between, then counts the rows. */
export async function runFaultScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const {
    baseUrl,
    apiKey,
    proxy,
    concurrency = 6,
    calmMs = 6000,
    faultMs = 4000,
    clientTimeoutMs = 30_000,
  } = options;
  const marker = options.marker ?? `fault-run-${randomBytes(4).toString('hex')}`;
  const control = postgres(options.controlUrl, { max: 2, onnotice: () => {} });
  const records: RequestRecord[] = [];
  const windows: FaultWindow[] = [];
  const t0 = Date.now();
  const now = () => Date.now() - t0;
  let running = true;
  let sequence = 0;

  const request = async (kind: 'write' | 'search'): Promise<void> => {
    const n = (sequence += 1);
    const body =
      kind === 'write'
        ? { user_id: 'fault-user', text: `${marker} note ${n}: the kettle is on shelf ${n % 97}` }
        : { user_id: 'fault-user', query: `kettle shelf ${n % 97}` };
    const start = now();
    const record: RequestRecord = { kind, status: 0, start, ms: 0 };
    try {
      const response = await fetch(`${baseUrl}/v1/${kind === 'write' ? 'memories' : 'search'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(clientTimeoutMs),
      });
      const json = (await response.json().catch(() => ({}))) as {
        memory_id?: string;
        error?: { code?: string; details?: { outcome?: string[] } };
      };
      record.status = response.status;
      record.retryAfter = response.headers.get('retry-after');
      record.requestId = response.headers.get('x-request-id');
      if (json.error?.code) record.code = json.error.code;
      if (json.error?.details?.outcome) record.outcome = json.error.details.outcome.join(',');
      if (kind === 'write' && response.status === 200 && json.memory_id)
        record.memoryId = json.memory_id;
    } catch {
      record.status = 0;
    }
    record.ms = now() - start;
    records.push(record);
  };

  const worker = async (index: number) => {
    let i = index;
    while (running) {
      await request(i % 2 === 0 ? 'write' : 'search');
      i += 1;
    }
  };

  const backends = () => control`
    select pg_terminate_backend(pid) from pg_stat_activity
    where datname = ${options.database} and application_name = 'mnemo' and pid <> pg_backend_pid()`;

  const stage = async (name: FaultName) => {
    const start = now();
    if (name === 'terminate') {
      // Three rounds, so connections opened after the first are killed too.
      for (let round = 0; round < 3; round += 1) {
        await backends();
        await sleep(faultMs / 3);
      }
    } else if (name === 'lock') {
      await control.begin(async (tx) => {
        await tx.unsafe('lock table memories in access exclusive mode');
        await sleep(faultMs);
      });
    } else {
      proxy.set(name === 'restart' ? 'down' : 'blackhole');
      await sleep(faultMs);
      proxy.set('pass');
    }
    windows.push({ name, start, end: now() });
  };

  const load = Array.from({ length: concurrency }, (_, i) => worker(i));
  try {
    await sleep(calmMs);
    for (const fault of options.faults) {
      await stage(fault);
      await sleep(calmMs);
    }
  } finally {
    running = false;
    await Promise.all(load);
  }
  const durationMs = now();
  // Distinct: a write the service judged a duplicate of an earlier one answers with its id.
  const acknowledged = [...new Set(records.flatMap((r) => (r.memoryId ? [r.memoryId] : [])))];
  const [row] = await control<{ present: string }[]>`
    select count(*)::text as present from memories where id = any(${acknowledged}::uuid[])`;
  await control.end({ timeout: 5 });
  return {
    records,
    windows,
    durationMs,
    acknowledged,
    present: Number(row?.present ?? 0),
    marker,
  };
}

/** Status → count. */
export function histogram(records: RequestRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const record of records) {
    const key =
      record.status === 0 ? 'no answer' : `${record.status}${record.code ? ` ${record.code}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * After each fault: how long until every request started from then on (and answered before the
 * next fault) succeeded, in ms after the fault ended; undefined when that never happened in the window.
 */
export function recoveryTimes(
  result: Pick<ScenarioResult, 'records' | 'windows' | 'durationMs'>,
): Map<FaultName, number | undefined> {
  const times = new Map<FaultName, number | undefined>();
  result.windows.forEach((window, i) => {
    const until = result.windows[i + 1]?.start ?? result.durationMs;
    // Requests that ended before the next fault began: those the next fault met are its own.
    const after = result.records
      .filter((r) => r.start >= window.end && r.start + r.ms < until)
      .sort((a, b) => a.start - b.start);
    const lastFailure = after.filter((r) => r.status !== 200).at(-1);
    if (!lastFailure) times.set(window.name, 0);
    else {
      const next = after.find((r) => r.start > lastFailure.start);
      times.set(window.name, next ? next.start - window.end : undefined);
    }
  });
  return times;
}

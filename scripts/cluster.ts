/**
 * A Mnemo cluster on loopback, as real processes: a PostgreSQL primary and a streaming replica
 * (pg_basebackup -R), a Redis master, its replica and three Sentinels, N Mnemo instances and a
 * round-robin load balancer (HAProxy, or a small Node proxy when HAProxy is not installed).
 * Everything lives in one temporary folder and on free high ports; `stop` ends every process
 * and removes the folder.
 *
 * Used by `scripts/cluster.sh` (start / stop / status) and by the cluster test suite
 * (server/test/cluster), which imports {@link startCluster}. docs/scaling.md describes it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const SERVER_DIR = join(ROOT, 'server');
const PG_BIN = process.env.MNEMO_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const SENTINEL_NAME = 'mnemo';

export interface ClusterOptions {
  /** Mnemo instances behind the balancer (3). */
  instances?: number;
  /** Start the PostgreSQL streaming replica and point the instances' reads at it (true). */
  replica?: boolean;
  /** Redis master + replica + 3 Sentinels (true); false: one plain Redis. */
  sentinel?: boolean;
  /** The folder to keep everything in (a new temporary one). */
  dir?: string;
  /** Extra environment for every Mnemo instance. */
  env?: Record<string, string>;
  /** Extra environment of one instance (after `env`): an instance configured apart. */
  instanceEnv?: (index: number) => Record<string, string>;
  /** Log what is being started. */
  verbose?: boolean;
}

/** Where everything runs; written to `<dir>/cluster.json` for `status` and `stop`. */
export interface ClusterState {
  dir: string;
  apiKey: string;
  primary: { port: number; url: string; dataDir: string };
  replica: { port: number; url: string; dataDir: string } | undefined;
  redis: { ports: number[]; sentinels: number[]; url: string | undefined };
  instances: { port: number; url: string; pid: number }[];
  balancer: { port: number; url: string; pid: number; kind: 'haproxy' | 'node' };
  /** Every process this cluster started, by role, for `stop`. */
  pids: Record<string, number>;
}

export interface Cluster {
  state: ClusterState;
  /** The environment every Mnemo instance was started with. */
  instanceEnv: Record<string, string>;
  /** Starts instance `index` again (after {@link killInstance}), same port. */
  restartInstance(index: number): Promise<void>;
  /** `kill -9` of one Mnemo instance. */
  killInstance(index: number): void;
  /** Stops the PostgreSQL replica at once (`pg_ctl stop -m immediate`). */
  stopReplica(): void;
  /** `kill -9` of the current Redis master; returns its port. */
  killRedisMaster(): Promise<number>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** initdb and postgres refuse to run as root: as root, they run as the `postgres` user. */
const asRoot = process.getuid?.() === 0;

function runPg(command: string, args: string[]): void {
  const bin = join(PG_BIN, command);
  const result = asRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', bin, ...args], { encoding: 'utf8' })
    : spawnSync(bin, args, { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${command} failed (${result.status}): ${result.stderr || result.stdout}`);
}

function ownedByPostgres(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  chmodSync(path, 0o700);
  if (!asRoot) return;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  chownSync(path, uid, gid);
}

/** A detached process whose output goes to `<dir>/<name>.log`; it outlives this script. */
function launch(
  dir: string,
  name: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): ChildProcess {
  const log = openSync(join(dir, `${name}.log`), 'a');
  const child = spawn(command, args, {
    cwd: options.cwd ?? dir,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', log, log],
    detached: true,
  });
  child.unref();
  return child;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms`);
}

const httpOk = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2000) }).then((response) => response.ok);

function redisCli(port: number, ...args: string[]): string {
  const result = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    encoding: 'utf8',
  });
  return result.status === 0 ? result.stdout.trim() : '';
}

function writePostgresConf(dataDir: string, port: number, socketDir: string): void {
  const settings = [
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${socketDir}'`,
    'wal_level = replica',
    'max_wal_senders = 10',
    'hot_standby = on',
    'max_connections = 300',
    'shared_buffers = 32MB',
    // A cluster on one machine for trying and testing: durability against power loss is not
    // what it shows (a killed process loses nothing either way).
    'fsync = off',
    'synchronous_commit = on',
    'full_page_writes = off',
  ];
  writeFileSync(join(dataDir, 'postgresql.auto.conf'), settings.join('\n') + '\n', { flag: 'a' });
}

async function startPostgres(dir: string, pids: Record<string, number>, withReplica: boolean) {
  const socketDir = join(dir, 'sockets');
  ownedByPostgres(socketDir);
  const primaryDir = join(dir, 'pg-primary');
  ownedByPostgres(primaryDir);
  const primaryPort = await freePort();
  runPg('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  writeFileSync(
    join(primaryDir, 'pg_hba.conf'),
    'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
  );
  writePostgresConf(primaryDir, primaryPort, socketDir);
  runPg('pg_ctl', ['-D', primaryDir, '-l', join(primaryDir, 'server.log'), '-w', 'start']);
  pids['pg-primary'] = Number(
    readFileSync(join(primaryDir, 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  const psql = (port: number, sqlText: string) =>
    spawnSync(
      join(PG_BIN, 'psql'),
      ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-Atc', sqlText],
      { encoding: 'utf8' },
    );
  const created = psql(primaryPort, 'create database mnemo');
  if (created.status !== 0) throw new Error(`create database failed: ${created.stderr}`);
  const primary = {
    port: primaryPort,
    url: `postgres://postgres@127.0.0.1:${primaryPort}/mnemo`,
    dataDir: primaryDir,
  };
  if (!withReplica) return { primary, replica: undefined };
  const replicaDir = join(dir, 'pg-replica');
  ownedByPostgres(replicaDir);
  const replicaPort = await freePort();
  runPg('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primaryPort),
    '-U',
    'postgres',
    '-D',
    replicaDir,
    '-R',
    '-X',
    'stream',
    '--no-sync',
    '--checkpoint=fast',
  ]);
  writePostgresConf(replicaDir, replicaPort, socketDir);
  runPg('pg_ctl', ['-D', replicaDir, '-l', join(replicaDir, 'server.log'), '-w', 'start']);
  pids['pg-replica'] = Number(
    readFileSync(join(replicaDir, 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  await waitFor(
    'the replica streaming',
    async () => psql(replicaPort, 'select pg_is_in_recovery()').stdout.trim() === 't',
  );
  const replica = {
    port: replicaPort,
    url: `postgres://postgres@127.0.0.1:${replicaPort}/mnemo`,
    dataDir: replicaDir,
  };
  return { primary, replica };
}

async function startRedis(dir: string, pids: Record<string, number>, withSentinel: boolean) {
  const masterPort = await freePort();
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  pids['redis-0'] = launch(dir, 'redis-0', 'redis-server', [
    '--port',
    String(masterPort),
    ...common,
  ]).pid!;
  await waitFor('redis', async () => redisCli(masterPort, 'ping') === 'PONG', 10_000);
  if (!withSentinel)
    return { ports: [masterPort], sentinels: [], url: `redis://127.0.0.1:${masterPort}` };
  const replicaPort = await freePort();
  pids['redis-1'] = launch(dir, 'redis-1', 'redis-server', [
    '--port',
    String(replicaPort),
    ...common,
    '--replicaof',
    '127.0.0.1',
    String(masterPort),
  ]).pid!;
  const sentinels: number[] = [];
  for (let index = 0; index < 3; index += 1) {
    const port = await freePort();
    const conf = join(dir, `sentinel-${index}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${masterPort} 2`,
        // Fast failover for a loopback cluster: a master silent for 1 s is down.
        `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
        `sentinel failover-timeout ${SENTINEL_NAME} 5000`,
        `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
      ].join('\n') + '\n',
    );
    pids[`sentinel-${index}`] = launch(dir, `sentinel-${index}`, 'redis-server', [
      conf,
      '--sentinel',
    ]).pid!;
    sentinels.push(port);
  }
  await waitFor('redis replica', async () =>
    redisCli(replicaPort, 'info', 'replication').includes('master_link_status:up'),
  );
  await waitFor('sentinels', async () =>
    sentinels.every((port) =>
      redisCli(port, 'sentinel', 'get-master-addr-by-name', SENTINEL_NAME).includes(
        String(masterPort),
      ),
    ),
  );
  return { ports: [masterPort, replicaPort], sentinels, url: undefined };
}

function instanceEnvironment(
  state: Pick<ClusterState, 'primary' | 'replica' | 'redis' | 'apiKey'>,
  extra: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    DATABASE_URL: state.primary.url,
    MNEMO_BOOTSTRAP_API_KEY: state.apiKey,
    MNEMO_API_KEY_SALT: 'cluster-salt-shared-by-every-instance',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
  if (state.replica) env.DATABASE_READ_URL = state.replica.url;
  if (state.redis.sentinels.length > 0) {
    env.REDIS_SENTINELS = state.redis.sentinels.map((port) => `127.0.0.1:${port}`).join(',');
    env.REDIS_SENTINEL_NAME = SENTINEL_NAME;
  } else if (state.redis.url) {
    env.REDIS_URL = state.redis.url;
  }
  return { ...env, ...extra };
}

function launchInstance(dir: string, index: number, port: number, env: Record<string, string>) {
  return launch(
    dir,
    `mnemo-${index}`,
    process.execPath,
    ['--conditions=mnemo-source', '--import', 'tsx', 'src/main.ts'],
    { cwd: SERVER_DIR, env: { ...env, PORT: String(port) } },
  );
}

function haproxyAvailable(): boolean {
  return spawnSync('haproxy', ['-v'], { encoding: 'utf8' }).status === 0;
}

function startBalancer(dir: string, port: number, backends: number[]) {
  if (haproxyAvailable()) {
    const conf = join(dir, 'haproxy.cfg');
    writeFileSync(
      conf,
      [
        'global',
        '  maxconn 4096',
        'defaults',
        '  mode http',
        '  timeout connect 2s',
        '  timeout client 60s',
        '  timeout server 60s',
        // An instance's connection refused (killed, restarting): the request goes to another.
        '  retries 2',
        '  option redispatch',
        'frontend mnemo',
        `  bind 127.0.0.1:${port}`,
        '  default_backend instances',
        'backend instances',
        '  balance roundrobin',
        // Every request its own server pick (no keep-alive pinning to one instance).
        '  option http-server-close',
        '  option httpchk GET /ready',
        ...backends.map(
          (backend, index) =>
            `  server mnemo${index} 127.0.0.1:${backend} check inter 500 fall 2 rise 1`,
        ),
      ].join('\n') + '\n',
    );
    return {
      pid: launch(dir, 'balancer', 'haproxy', ['-f', conf, '-db']).pid!,
      kind: 'haproxy' as const,
    };
  }
  // The fallback: a small round-robin proxy in its own process.
  const script = join(dir, 'balancer.mjs');
  writeFileSync(script, `(${nodeBalancer.toString()})(${port}, ${JSON.stringify(backends)});\n`);
  return { pid: launch(dir, 'balancer', process.execPath, [script]).pid!, kind: 'node' as const };
}

/** Round robin over the backends; a refused connection moves on to the next one. */
function nodeBalancer(port: number, backends: number[]): void {
  let next = 0;
  createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number) => {
        const backend = backends[next++ % backends.length];
        const upstream = httpRequest(
          {
            host: '127.0.0.1',
            port: backend,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', () => {
          if (tries + 1 < backends.length && !res.headersSent) return attempt(tries + 1);
          if (!res.headersSent) res.writeHead(502);
          res.end();
        });
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      };
      attempt(0);
    });
  }).listen(port, '127.0.0.1');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function stopPids(state: ClusterState): void {
  for (const [role, pid] of Object.entries(state.pids)) {
    if (role.startsWith('pg-')) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dataDir of [state.replica?.dataDir, state.primary.dataDir]) {
    if (dataDir && existsSync(join(dataDir, 'postmaster.pid'))) {
      try {
        runPg('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // not running
      }
    }
  }
}

/** Starts everything and waits until each instance answers /ready through the balancer. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const instances = options.instances ?? 3;
  const dir = options.dir ?? join(tmpdir(), `mnemo-cluster-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const log = (message: string) => {
    if (options.verbose) process.stderr.write(`cluster: ${message}\n`);
  };
  const pids: Record<string, number> = {};
  const apiKey = `mnemo_cluster_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  let state: ClusterState | undefined;
  try {
    log(`PostgreSQL primary${options.replica === false ? '' : ' and replica'} in ${dir}`);
    const { primary, replica } = await startPostgres(dir, pids, options.replica !== false);
    log(options.sentinel === false ? 'Redis' : 'Redis master, replica and 3 Sentinels');
    const redis = await startRedis(dir, pids, options.sentinel !== false);
    const ports = await Promise.all(Array.from({ length: instances }, () => freePort()));
    const env = instanceEnvironment({ primary, replica, redis, apiKey }, options.env ?? {});
    const started: ClusterState['instances'] = [];
    for (const [index, port] of ports.entries()) {
      const child = launchInstance(dir, index, port, { ...env, ...options.instanceEnv?.(index) });
      pids[`mnemo-${index}`] = child.pid!;
      started.push({ port, url: `http://127.0.0.1:${port}`, pid: child.pid! });
      // The first one alone: it applies the migrations and creates the bootstrap workspace
      // before the others start (simultaneous starts are a test of their own).
      if (index === 0)
        await waitFor(`mnemo on ${port}`, () => httpOk(`http://127.0.0.1:${port}/ready`), 120_000);
    }
    const balancerPort = await freePort();
    const balancer = startBalancer(dir, balancerPort, ports);
    pids.balancer = balancer.pid;
    state = {
      dir,
      apiKey,
      primary,
      replica,
      redis,
      instances: started,
      balancer: { port: balancerPort, url: `http://127.0.0.1:${balancerPort}`, ...balancer },
      pids,
    };
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify(state, null, 2));
    log(`${instances} Mnemo instances and the ${balancer.kind} balancer`);
    for (const instance of started)
      await waitFor(`mnemo on ${instance.port}`, () => httpOk(`${instance.url}/ready`), 120_000);
    await waitFor('the balancer', () => httpOk(`${state!.balancer.url}/ready`), 20_000);
    return clusterHandle(state, env, options.instanceEnv);
  } catch (error) {
    stopPids(
      state ??
        ({
          dir,
          pids,
          primary: { dataDir: join(dir, 'pg-primary') },
          replica: { dataDir: join(dir, 'pg-replica') },
        } as ClusterState),
    );
    throw error;
  }
}

function clusterHandle(
  state: ClusterState,
  env: Record<string, string>,
  instanceEnv: ClusterOptions['instanceEnv'],
): Cluster {
  return {
    state,
    instanceEnv: env,
    killInstance(index) {
      process.kill(state.instances[index]!.pid, 'SIGKILL');
    },
    async restartInstance(index) {
      const instance = state.instances[index]!;
      const child = launchInstance(state.dir, index, instance.port, {
        ...env,
        ...instanceEnv?.(index),
      });
      instance.pid = child.pid!;
      state.pids[`mnemo-${index}`] = child.pid!;
      writeFileSync(join(state.dir, 'cluster.json'), JSON.stringify(state, null, 2));
      await waitFor(`mnemo on ${instance.port}`, () => httpOk(`${instance.url}/ready`), 120_000);
    },
    stopReplica() {
      if (state.replica)
        runPg('pg_ctl', ['-D', state.replica.dataDir, '-m', 'immediate', '-w', 'stop']);
    },
    async killRedisMaster() {
      const address = redisCli(
        state.redis.sentinels[0]!,
        'sentinel',
        'get-master-addr-by-name',
        SENTINEL_NAME,
      );
      const port = Number(address.split('\n')[1]);
      const role = state.redis.ports.indexOf(port);
      process.kill(state.pids[`redis-${role}`]!, 'SIGKILL');
      return port;
    },
    async stop() {
      stopPids(state);
      rmSync(state.dir, { recursive: true, force: true });
    },
  };
}

function readState(dir: string): ClusterState {
  return JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
}

function status(state: ClusterState): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const [role, pid] of Object.entries(state.pids))
    lines[role] = `${alive(pid) ? 'running' : 'stopped'} (pid ${pid})`;
  return lines;
}

async function cli(argv: string[]): Promise<void> {
  const [command = 'status', ...rest] = argv;
  const option = (name: string) => {
    const at = rest.indexOf(`--${name}`);
    return at >= 0 ? rest[at + 1] : undefined;
  };
  const dir = option('dir') ?? process.env.MNEMO_CLUSTER_DIR ?? join(tmpdir(), 'mnemo-cluster');
  if (command === 'start') {
    if (existsSync(join(dir, 'cluster.json')))
      throw new Error(`a cluster already runs in ${dir} (stop it first)`);
    const cluster = await startCluster({
      dir,
      instances: Number(option('instances') ?? 3),
      replica: !rest.includes('--no-replica'),
      sentinel: !rest.includes('--no-sentinel'),
      verbose: true,
    });
    const { state } = cluster;
    process.stdout.write(
      [
        `cluster running in ${state.dir}`,
        `  balancer    ${state.balancer.url} (${state.balancer.kind})`,
        ...state.instances.map((instance, index) => `  mnemo-${index}     ${instance.url}`),
        `  primary     ${state.primary.url}`,
        ...(state.replica ? [`  replica     ${state.replica.url}`] : []),
        state.redis.sentinels.length > 0
          ? `  sentinels   ${cluster.instanceEnv.REDIS_SENTINELS} (master name ${SENTINEL_NAME})`
          : `  redis       ${state.redis.url}`,
        `  API key     ${state.apiKey}`,
        `  logs        ${state.dir}/*.log`,
        `stop with: scripts/cluster.sh stop --dir ${state.dir}`,
      ].join('\n') + '\n',
    );
  } else if (command === 'stop') {
    if (!existsSync(join(dir, 'cluster.json'))) throw new Error(`no cluster in ${dir}`);
    const state = readState(dir);
    stopPids(state);
    rmSync(dir, { recursive: true, force: true });
    process.stdout.write(`cluster in ${dir} stopped and removed\n`);
  } else if (command === 'status') {
    if (!existsSync(join(dir, 'cluster.json'))) {
      process.stdout.write(`no cluster in ${dir}\n`);
      process.exitCode = 1;
      return;
    }
    const lines = status(readState(dir));
    for (const [role, line] of Object.entries(lines))
      process.stdout.write(`${role.padEnd(12)}${line}\n`);
  } else {
    throw new Error(`unknown command ${command}: start | stop | status [--dir <folder>]`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`cluster: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

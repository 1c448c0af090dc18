import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, mcpSessionStore } from './app.js';
import { attachClientErrorHandler } from './http/client-error.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { createDeps } from './deps.js';
import { jobCatalogue } from './jobs/catalogue.js';
import { inProcessRunner, pgBossRunner } from './jobs/runner.js';
import { scheduleWebhookDispatch } from './jobs/webhook-dispatch.js';
import { createLogger, prettyLogStream } from './logger.js';
import { survivingRejections } from './unhandled-rejections.js';
import { ensureBootstrapWorkspace } from './services/bootstrap.js';
import { localSignInLink } from './services/dashboard/index.js';
import { limitsSummary } from './services/plans.js';
import { databaseFailure, describeStartupFailure, listenFailure } from './startup-errors.js';

/** Binds the port; rejects with the socket's error (EADDRINUSE...) instead of throwing it later. */
function listen(app: ReturnType<typeof createApp>, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    // Before it listens: its connection checks start then. Requests Node's parser refuses are
    // answered with the error envelope, not an empty 400.
    attachClientErrorHandler(server);
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** How to mint more keys with what this process runs from: the build, or the sources. */
function moreKeysCommand(workspace: string): string {
  const built = fileURLToPath(new URL('./commands/create-key.js', import.meta.url));
  return import.meta.url.endsWith('.js')
    ? `node ${relative(process.cwd(), built)} --workspace ${workspace}`
    : `pnpm keys:create -- --workspace ${workspace}`;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logFormat = config.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const logger = createLogger(
    config.logLevel,
    logFormat === 'pretty' ? await prettyLogStream() : undefined,
  );
  // A rejection nothing awaits (a driver's under a fault, a late middleware's) is logged and
  // counted; it never ends a process that serves requests in flight.
  process.on('unhandledRejection', survivingRejections(logger).listener);
  const database = await openDatabase(
    config.databaseUrl
      ? { databaseUrl: config.databaseUrl, timeouts: config.databaseTimeouts, pools: config.pools }
      : { dataDir: config.dataDir },
  ).catch((error: unknown) => {
    throw databaseFailure(error, config);
  });
  logger.info(
    {
      driver: database.driver,
      ...(database.driver === 'pglite' ? { data_dir: config.dataDir } : {}),
    },
    'database ready (migrations applied)',
  );
  const deps = await createDeps(config, logger, database);
  const mcpSessions = mcpSessionStore(deps);
  const app = createApp(deps, mcpSessions);
  // Bound before anything is minted or printed: a port in use ends the start here, no key lost.
  const server = await listen(app, config.port, config.host).catch(async (error: unknown) => {
    await database.close().catch(() => undefined);
    throw listenFailure(error, config.host, config.port);
  });
  const boot = await ensureBootstrapWorkspace(database.db, deps.apiKeys, config);
  // Scheduled jobs: once across instances on PostgreSQL (pg-boss), timers on embedded PGlite.
  const jobs = jobCatalogue({
    config,
    db: database.db,
    events: deps.events,
    logger,
    plans: deps.plans,
    billing: deps.billing,
    sessions: deps.dashboard.sessions,
    embeddings: deps.embeddings,
  });
  const runner = config.databaseUrl
    ? pgBossRunner(database.db, logger, jobs, {
        databaseUrl: config.databaseUrl,
        poolMax: config.pools.jobs,
      })
    : inProcessRunner(database.db, logger, jobs);
  await runner.start();
  // Webhook deliveries: a loop of its own on every instance (claims are SKIP LOCKED, each sent once).
  const webhookDispatch = scheduleWebhookDispatch(
    { db: database.writer, secrets: deps.webhookSecrets, logger, config: config.webhooks },
    config.webhooks.dispatchIntervalMs,
  );
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (boot.mintedKey) {
    // Printed once, on the first start only: only the key's hash is stored.
    process.stderr.write(
      [
        '',
        '  Mnemo created workspace "' +
          config.bootstrapWorkspaceName +
          '" (' +
          boot.workspaceId +
          ')',
        '  API key (shown once, keep it safe):',
        '',
        '    ' + boot.mintedKey.plaintext,
        '',
        '  More keys: ' + moreKeysCommand(config.bootstrapWorkspaceName),
        '',
      ].join('\n') + '\n',
    );
  }

  const wildcard = config.host === '0.0.0.0' || config.host === '::';
  const signInLink = await localSignInLink(deps.dashboard, {
    workspaceId: boot.workspaceId,
    baseUrl: config.dashboard.publicUrl ?? `http://${wildcard ? 'localhost' : config.host}:${port}`,
    ttlMs: config.dashboard.linkTtlMs,
  });
  if (signInLink) {
    // No identity provider configured: a fresh link at every start (docs/dashboard.md).
    const minutes = Math.round(config.dashboard.linkTtlMs / 60_000);
    process.stderr.write(
      `\n  Console sign-in link (valid ${minutes} min, a new one at every start):\n\n    ${signInLink}\n\n`,
    );
  }
  const limits = limitsSummary(config);
  logger.info(limits.fields, limits.message);
  // Last: start-up has succeeded (process supervisors and the tests wait for this line).
  logger.info({ url: `http://${config.host}:${port}` }, 'mnemo listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // First out of the load balancer's rotation: /ready answers 503 while requests are still
    // served, for MNEMO_SHUTDOWN_DRAIN_MS (a few of its health-check intervals).
    deps.drain.draining = true;
    logger.info({ signal, drain_ms: config.shutdown.drainMs }, 'shutting down');
    if (config.shutdown.drainMs > 0) await delay(config.shutdown.drainMs);
    // Stop accepting, let in-flight requests finish, and don't wait on idle keep-alive sockets;
    // a client that holds a connection open gets MNEMO_SHUTDOWN_GRACE_MS.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Open MCP sessions hold event streams open: closing them lets those requests finish.
    await mcpSessions.closeAll();
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), config.shutdown.graceMs).unref();
    await closed;
    logger.debug('http server closed');
    await runner.stop();
    await webhookDispatch.stop();
    await deps.background.drain();
    await deps.quota.drain?.();
    await deps.statistics.drain();
    await deps.audit.drain();
    logger.debug('audit drained');
    await deps.revocations.close();
    await deps.limits.close();
    await deps.readReplicas?.close();
    await database.close();
    logger.debug('database closed');
    // The log destination is asynchronous: let it write what it holds before exiting.
    logger.flush(() => process.exit(0));
    setTimeout(() => process.exit(0), 1_000).unref();
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(describeStartupFailure(error) + '\n');
  process.exit(1);
});

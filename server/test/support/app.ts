import type { Express } from 'express';
import { afterAll, afterEach, expect } from 'vitest';
import { describeViolations, ResponseChecker } from '../../../test/src/response-check.js';
import { createApp, mcpSessionStore } from '../../src/app.js';
import type { McpSessionStore } from '../../src/mcp/sessions.js';
import type { AppDeps } from '../../src/deps.js';
import { loadConfig, type AppConfig } from '../../src/config.js';
import { createWorkspace } from '../../src/db/queries/workspaces.js';
import { createDeps } from '../../src/deps.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface TestTenant {
  workspaceId: string;
  apiKey: string;
}

export interface TestApp {
  app: Express;
  deps: AppDeps;
  /** The app's open MCP sessions. */
  mcpSessions: McpSessionStore;
  database: TestDatabase;
  /** A workspace with a fresh key, made for the test. */
  tenant: TestTenant;
  addTenant(name?: string): Promise<TestTenant>;
  close(): Promise<void>;
}

/**
 * Every response of every app made here is checked against the contract (test/src/response-check.ts);
 * the test that made a request breaking it fails after it ends. Registered at import, so the hooks
 * belong to the importing test file.
 */
export const responseChecks = new ResponseChecker(() => expect.getState().currentTestName);
const failOnViolations = () => {
  const violations = responseChecks.takeViolations();
  if (violations.length > 0) throw new Error(describeViolations(violations));
};
afterEach(failOnViolations);
// Requests made after the last test (an afterAll, a late background call) still count.
afterAll(failOnViolations);

/**
 * Request rates high enough that no suite but the limit tests meets them: suites fire hundreds of
 * requests a minute and races of 20 at once. Plans, caps and metering stay on as deployed.
 */
export const UNTHROTTLED: Record<string, string> = {
  MNEMO_KEY_RATE_LIMIT_PER_MINUTE: '1000000',
  MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE: '1000000',
  MNEMO_INFLIGHT_PER_WORKSPACE: '1000',
  MNEMO_DASHBOARD_RATE_LIMIT_PER_MINUTE: '1000000',
};

/** Configuration as the server would read it from this environment, plus test overrides. */
export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({ LOG_LEVEL: 'silent', ...UNTHROTTLED, ...env });
}

/** The real app over a fresh database of the current backend (PGlite or PostgreSQL). */
export async function createTestApp(
  env: Record<string, string> = {},
  {
    logger,
    ...overrides
  }: Partial<Pick<AppDeps, 'embeddings' | 'quota' | 'limits'>> & {
    /** Where the app logs (default: the configured level, silent in tests). */
    logger?: Logger;
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = testConfig(env);
  const deps = await createDeps(
    config,
    logger ?? createLogger(config.logLevel),
    database,
    overrides,
  );
  const mcpSessions = mcpSessionStore(deps);
  const addTenant = async (name = 'test'): Promise<TestTenant> => {
    const workspace = await createWorkspace(database.db, { name });
    const key = await deps.apiKeys.mint(workspace.id, 'test');
    return { workspaceId: workspace.id, apiKey: key.plaintext };
  };
  const tenant = await addTenant();
  return {
    app: responseChecks.wrap(createApp(deps, mcpSessions)),
    deps,
    mcpSessions,
    database,
    tenant,
    addTenant,
    close: async () => {
      await mcpSessions.closeAll();
      await deps.background.drain();
      await deps.quota.drain?.();
      await deps.statistics.drain();
      await deps.audit.drain();
      await deps.limits.close();
      await deps.revocations.close();
      await database.close();
    },
  };
}

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNTHROTTLED } from '../support/app.js';
import { testBackend } from '../support/db.js';
import { startServer, stop, type Started } from '../support/server-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WEB = join(ROOT, 'web');
const ARTIFACTS = join(ROOT, 'test-artifacts', 'console');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI) {
  // In CI the browser test must run: scripts/install-chromium.sh (called by .ci/run) installs it.
  throw new Error(`${CHROMIUM} is missing: run scripts/install-chromium.sh (CI must not skip)`);
}
if (!haveChromium) {
  console.warn(`console e2e skipped: ${CHROMIUM} is missing (run scripts/install-chromium.sh)`);
}

/** The sign-in link the server prints to stderr at start (no identity provider configured). */
async function signInLink(server: Started): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const match = /(http:\/\/\S+\/console\/#token=[\w.-]+)/.exec(server.stderr());
    if (match?.[1]) return match[1];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no sign-in link printed:\n${server.stderr()}`);
}

describe.runIf(testBackend() === 'pglite' && haveChromium)(
  'web console in Chromium against a started server',
  () => {
    let dataDir: string;
    let server: Started;
    let browser: Browser;
    let page: Page;

    const shot = (name: string) =>
      page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    const go = async (hash: string, heading: string) => {
      await page.goto(`${server.baseUrl}/console/#/${hash}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    };

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      // The console as `pnpm start` builds it.
      execFileSync(process.execPath, [join(WEB, 'node_modules/vite/bin/vite.js'), 'build'], {
        cwd: WEB,
        stdio: 'pipe',
      });
      dataDir = await mkdtemp(join(tmpdir(), 'mnemo-console-'));
      // A loaded machine (two cores, other suites) can take a while to transform and migrate.
      server = await startServer(
        { ...UNTHROTTLED, MNEMO_DATA_DIR: dataDir },
        { timeoutMs: 90_000 },
      );
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      page = await context.newPage();
      page.on('dialog', (dialog) => void dialog.accept());
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      if (server) await stop(server.child);
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it('signs in, mints a key, shows and searches its memory, and revokes it', async () => {
      // Sign in through the printed link: the token sits in the fragment, never in a URL sent.
      await page.goto(`${server.baseUrl}/console/`);
      await page.getByRole('heading', { name: 'Sign in to Mnemo' }).waitFor();
      await shot('01-sign-in');
      await page.goto(await signInLink(server));
      await page.getByRole('heading', { level: 1, name: /Overview/ }).waitFor();
      expect(page.url()).not.toContain('token=');
      await shot('02-overview');

      // A new workspace, then switch to it.
      await go('workspaces', 'Workspaces');
      await page.getByLabel('New workspace name').fill('E2E Workspace');
      await page.getByRole('button', { name: 'Create workspace' }).click();
      await page.getByRole('button', { name: 'Switch to E2E Workspace' }).click();
      await expect
        .poll(() => page.getByTestId('current-workspace').textContent())
        .toBe('E2E Workspace');
      await go('workspaces', 'Workspaces');
      await page.getByText('Current').waitFor();
      await shot('03-workspaces');

      // Mint a key: shown once.
      await go('keys', 'API keys');
      await page.getByLabel('Key name').fill('e2e-key');
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.getByTestId('minted-key').textContent())?.trim() ?? '';
      expect(key).toMatch(/^mnemo_/);
      await shot('04-api-keys');

      // Use the key through the HTTP API, as an app would.
      const write = await fetch(`${server.baseUrl}/v1/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          text: 'Priya prefers window seats on long flights',
          user_id: 'priya',
          memory_type: 'preference',
        }),
      });
      expect(write.status, await write.clone().text()).toBe(200);

      // The memory in the browser.
      await go('memories', 'Memories');
      await page.getByLabel('Owner id').fill('priya');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByRole('button', { name: /Priya prefers window seats/ }).click();
      await page.getByRole('heading', { name: /^Memory / }).waitFor();
      await page.getByText('Lifecycle history').waitFor();
      await shot('05-memories');

      // Search it in the playground, with the score explained.
      await go('search', 'Search playground');
      await page.getByLabel('Query').fill('window seat');
      await page.getByLabel('Owner id').fill('priya');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator('.result', { hasText: 'Priya prefers window seats' }).waitFor();
      await page.getByText('Why this score').first().click();
      await page.getByText('Fusion (RRF)').first().waitFor();
      await shot('06-search');

      await go('usage', 'Usage today');
      await page.getByRole('img', { name: /writes 1 of/ }).waitFor();
      await shot('07-usage');

      // Revoke: the key stops working at once.
      await go('keys', 'API keys');
      await page.getByRole('button', { name: 'Revoke e2e-key' }).click();
      await page.getByText('Revoked').waitFor();
      await shot('08-revoked');
      const after = await fetch(`${server.baseUrl}/v1/usage/today`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(after.status).toBe(401);
    }, 180_000);
  },
);

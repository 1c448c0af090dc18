import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };
/** More than two pages of the memory browser (20 a page). */
const SEEDED = 45;

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

/** Pixels of a canvas in the given colour: the chart drew bars, not only axes. */
function barPixels(page: Page, testId: string, rgb: [number, number, number]): Promise<number> {
  return page.getByTestId(testId).evaluate((box, [r, g, b]) => {
    const canvas = box.querySelector('canvas');
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return 0;
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let count = 0;
    for (let i = 0; i < data.length; i += 4) {
      const near = (a: number, c: number) => Math.abs((data[a] ?? 0) - c) < 12;
      if (near(i, r) && near(i + 1, g) && near(i + 2, b) && (data[i + 3] ?? 0) > 200) count++;
    }
    return count;
  }, rgb);
}

describe.runIf(testBackend() === 'pglite' && haveChromium)(
  'web console in Chromium against a started server',
  () => {
    let dataDir: string;
    let server: Started;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let key = '';
    /** A webhook receiver on loopback: what the server delivered, in order. */
    let receiver: Server;
    let hookUrl = '';
    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];

    const shot = (name: string) =>
      page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    const go = async (hash: string, heading: string | RegExp) => {
      await page.goto(`${server.baseUrl}/console/#/${hash}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    };
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...init.headers,
        },
      });
    /** The page fits the viewport: nothing pushes it sideways. */
    const fitsWidth = () =>
      // A string: this package's types have no DOM; it runs in the page.
      page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      // The console as `pnpm start` builds it.
      execFileSync(process.execPath, [join(WEB, 'node_modules/vite/bin/vite.js'), 'build'], {
        cwd: WEB,
        stdio: 'pipe',
      });
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/mnemo-hook`;
      dataDir = await mkdtemp(join(tmpdir(), 'mnemo-console-'));
      // A loaded machine (two cores, other suites) can take a while to transform and migrate.
      server = await startServer(
        {
          ...UNTHROTTLED,
          MNEMO_DATA_DIR: dataDir,
          // The receiver is on loopback, which endpoint validation refuses unless allowed.
          MNEMO_WEBHOOKS_ALLOW_PRIVATE: 'true',
          MNEMO_WEBHOOKS_DISPATCH_INTERVAL_MS: '200',
        },
        { timeoutMs: 90_000 },
      );
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      context = await browser.newContext({ viewport: DESKTOP });
      page = await context.newPage();
      page.on('dialog', (dialog) => void dialog.accept());
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      receiver?.close();
      if (server) await stop(server.child);
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it('points GET / at the console', async () => {
      const asBrowser = await fetch(`${server.baseUrl}/`, {
        headers: { accept: 'text/html' },
        redirect: 'manual',
      });
      expect(asBrowser.status).toBe(302);
      expect(asBrowser.headers.get('location')).toBe('/console/');
      expect(await (await fetch(`${server.baseUrl}/`)).json()).toMatchObject({
        console: '/console/',
      });
    });

    it('says a bad sign-in link is not valid, in words, then signs in through the printed link', async () => {
      await page.goto(`${server.baseUrl}/console/#token=eyJhbGciOiJIUzI1NiJ9.e30.bad-signature`);
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/sign-in link or token is not valid/);
      expect(await page.content()).not.toMatch(/ERR_JWS|UNAUTHORIZED/);
      await shot('01-sign-in-bad-link');

      await page.goto(await signInLink(server));
      await page.getByRole('heading', { level: 1, name: /Overview/ }).waitFor();
      expect(page.url()).not.toContain('token=');
    });

    it('creates a workspace, mints a key, and shows the plan the API shows', async () => {
      await go('workspaces', 'Workspaces');
      await page.getByLabel('New workspace name').fill('E2E Workspace');
      await page.getByRole('button', { name: 'Create workspace' }).click();
      await page.getByRole('button', { name: 'Switch to E2E Workspace' }).click();
      await expect
        .poll(() => page.getByTestId('current-workspace').textContent())
        .toBe('E2E Workspace');
      await go('workspaces', 'Workspaces');
      await page.getByText('Current').waitFor();
      await shot('02-workspaces');

      await go('keys', 'API keys');
      await page.getByLabel('Key name').fill('e2e-key');
      await page.getByRole('button', { name: 'Create key' }).click();
      key = (await page.getByTestId('minted-key').textContent())?.trim() ?? '';
      expect(key).toMatch(/^mnemo_/);
      await shot('03-api-keys');

      // Seed through the HTTP API as an app would: two owners, more than two pages for one.
      const texts = Array.from({ length: SEEDED }, (_, i) =>
        i === 0
          ? 'Priya prefers window seats on long flights'
          : `Priya note ${i}: visited city number ${i} and liked its museum ${i * 7}`,
      );
      for (let i = 0; i < texts.length; i += 5) {
        const writes = await Promise.all(
          texts.slice(i, i + 5).map((text) =>
            api('/v1/memories', {
              method: 'POST',
              body: JSON.stringify({ text, user_id: 'priya', extract: false }),
            }),
          ),
        );
        for (const write of writes) expect(write.status, await write.clone().text()).toBe(200);
      }
      const sam = await api('/v1/memories', {
        method: 'POST',
        body: JSON.stringify({ text: 'Sam drinks his coffee black', user_id: 'sam' }),
      });
      expect(sam.status).toBe(200);
      const search = await api('/v1/search', {
        method: 'POST',
        body: JSON.stringify({ query: 'window seat', user_id: 'priya' }),
      });
      expect(search.status).toBe(200);

      const usage = (await (await api('/v1/usage/today')).json()) as { plan: string };
      await go('overview', /Overview/);
      expect(await page.getByTestId('plan').textContent()).toBe(usage.plan);
      await page
        .getByText(`${SEEDED + 1}`, { exact: true })
        .first()
        .waitFor();
      await page.getByRole('heading', { name: 'Connect your app' }).waitFor();
      expect(await page.getByTestId('base-url').textContent()).toBe(server.baseUrl);
      await page.getByRole('img', { name: /Requests per day, 30 days/ }).waitFor();
      await shot('04-overview');
    }, 120_000);

    it('charts requests, writes and reads per day with the seeded data', async () => {
      await go('usage', 'Usage');
      const writes = page.getByRole('img', { name: /Writes per day/ });
      await writes.waitFor();
      expect(await writes.getAttribute('aria-label')).toMatch(new RegExp(`Writes: ${SEEDED + 1}`));
      expect(
        await page.getByRole('img', { name: /Reads per day/ }).getAttribute('aria-label'),
      ).toMatch(/Reads: 1\b/);
      // Bars drawn in each series' colour on the canvases.
      expect(await barPixels(page, 'chart-Writes per day', [124, 58, 237])).toBeGreaterThan(50);
      expect(await barPixels(page, 'chart-Requests per day', [37, 99, 235])).toBeGreaterThan(50);
      await page.getByRole('meter', { name: 'Writes' }).waitFor();
      await page.getByRole('heading', { name: 'Rate limit' }).waitFor();
      await page.getByRole('link', { name: 'priya', exact: true }).waitFor();
      await shot('05-usage');
    });

    it('pages through an owner’s memories, edits one (supersede) and deletes one', async () => {
      await go('memories', 'Memories');
      await page.locator('select[name="owner"]').selectOption({ label: `priya · ${SEEDED}` });
      const status = page.getByTestId('page-status');
      await expect.poll(() => status.textContent()).toBe(`1–20 of ${SEEDED}`);
      // The picked owner's data: export and erase (docs/export.md) sit above the list.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Export priya' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('user-priya.jsonl');
      const exported = (await readFile(await download.path(), 'utf8')).trim().split('\n');
      // JSON Lines, with every memory of the owner in it (the session cookie went along).
      expect(exported.every((line) => typeof JSON.parse(line) === 'object')).toBe(true);
      expect(exported.join('\n')).toContain('Priya prefers window seats on long flights');
      expect(exported.length).toBeGreaterThanOrEqual(SEEDED);
      await page.getByRole('button', { name: 'Next →' }).click();
      await expect.poll(() => status.textContent()).toBe(`21–40 of ${SEEDED}`);
      await page.getByRole('button', { name: 'Next →' }).click();
      await expect.poll(() => status.textContent()).toBe(`41–${SEEDED} of ${SEEDED}`);
      await expect.poll(() => page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
      // Newest first: the first write is on the last page.
      await page.getByRole('link', { name: /Priya prefers window seats/ }).click();
      await page.getByRole('heading', { name: /^Memory / }).waitFor();
      await page.getByText('Extracted memories').waitFor();
      await shot('06-memory-detail');

      // Edit: a new version that supersedes the old one.
      await page.getByRole('button', { name: 'Edit' }).click();
      await page.locator('textarea[name="text"]').fill('Priya prefers aisle seats on long flights');
      await page.getByRole('button', { name: 'Save new version' }).click();
      await page.locator('.memory-text', { hasText: 'aisle seats' }).waitFor();
      const listing = (await (await api('/v1/memories?user_id=priya&page_size=100')).json()) as {
        results: Array<{ id: string; text: string; lifecycle_state: string }>;
      };
      const old = listing.results.find((m) => m.text.includes('window seats'));
      expect(old?.lifecycle_state).toBe('replaced');
      const edited = listing.results.find((m) => m.text.includes('aisle seats'));
      expect(edited?.lifecycle_state).toBe('active');

      // Delete the new version (the dialog is accepted).
      await page.getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => status.textContent()).toMatch(new RegExp(`of ${SEEDED}$`));
      expect((await api(`/v1/memories/${edited!.id}`)).status).toBe(404);

      // Add one from the console.
      await page.getByRole('button', { name: 'Add memory' }).click();
      await page.locator('textarea[name="text"]').fill('Priya is learning Portuguese');
      await page.getByRole('button', { name: 'Add memory' }).last().click();
      await page.locator('.memory-text', { hasText: 'learning Portuguese' }).waitFor();
      await expect.poll(() => status.textContent()).toMatch(new RegExp(`of ${SEEDED + 1}$`));
    }, 60_000);

    it('links search results to their memory and explains an empty owner', async () => {
      await go('search', 'Search playground');
      await page.getByLabel('Query').fill('learning Portuguese');
      await page.getByRole('button', { name: 'Search' }).click();
      const summary = page.getByTestId('search-summary');
      await summary.waitFor();
      expect(await summary.textContent()).toMatch(/default owner/);

      await page.getByLabel('Owner id').fill('priya');
      await page.getByRole('button', { name: 'Search' }).click();
      // The edited memory is replaced (not searched); the one added in the console is.
      const result = page.locator('.result', { hasText: 'Priya is learning Portuguese' });
      await result.waitFor();
      await page.getByText('Why this score').first().click();
      await page.getByText('Fusion (RRF)').first().waitFor();
      await shot('07-search');
      await result.getByRole('link', { name: /^memory / }).click();
      await page.getByRole('heading', { level: 1, name: 'Memories' }).waitFor();
      await page.locator('.memory-text', { hasText: 'learning Portuguese' }).waitFor();
    });

    it('adds a webhook endpoint, shows its secret once, logs a delivery and replays it', async () => {
      await go('webhooks', 'Webhooks');
      await page.getByText('No endpoints yet').waitFor();
      await page.getByLabel('Endpoint URL').fill(hookUrl);
      await page.getByLabel('Description').fill('E2E receiver');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = (await page.getByTestId('webhook-secret').textContent())?.trim() ?? '';
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('cell', { name: hookUrl }).waitFor();
      await shot('09-webhooks-secret');
      // Shown once: gone when dismissed, and not in the endpoint listing.
      await page.getByRole('button', { name: 'Done' }).click();
      expect(await page.getByTestId('webhook-secret').count()).toBe(0);
      expect(await (await api('/v1/webhooks/endpoints')).text()).not.toContain(secret);

      const write = await api('/v1/memories', {
        method: 'POST',
        body: JSON.stringify({ text: 'Sam takes the early train', user_id: 'sam', extract: false }),
      });
      expect(write.status).toBe(200);
      await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
      const first = received[0]!;
      expect(JSON.parse(first.body)).toMatchObject({ type: 'memory.created' });
      // Signed with the secret the console showed (Standard Webhooks).
      const headers = Object.fromEntries(
        Object.entries(first.headers).map(([name, value]) => [name, String(value)]),
      );
      expect(() => new Webhook(secret).verify(first.body, headers)).not.toThrow();

      await page.getByRole('button', { name: 'Deliveries' }).click();
      const row = page.locator('tr', { hasText: 'memory.created' });
      await row.getByText('succeeded').waitFor();
      await shot('10-webhooks-deliveries');
      await row.getByRole('button', { name: 'Replay' }).click();
      // The same event again, under the same id, for the receiver to dedupe.
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(2);
      expect(received[1]!.headers['webhook-id']).toBe(first.headers['webhook-id']);
      // Requeued (attempts start over), then delivered again.
      await page.getByRole('button', { name: 'Refresh' }).click();
      await row.getByText('succeeded').waitFor();
      expect(await row.locator('td').nth(4).textContent()).toBe('204');
    }, 60_000);

    it('fits a 390 px phone on every page, the navigation behind a menu button', async () => {
      await page.setViewportSize(PHONE);
      const pages: Array<[string, string | RegExp]> = [
        ['overview', /Overview/],
        ['usage', 'Usage'],
        ['memories', 'Memories'],
        ['search', 'Search playground'],
        ['keys', 'API keys'],
        ['workspaces', 'Workspaces'],
        ['webhooks', 'Webhooks'],
      ];
      for (const [hash, heading] of pages) {
        await go(hash, heading);
        if (hash === 'overview')
          await page.getByRole('img', { name: /Requests per day/ }).waitFor();
        if (hash === 'usage') await page.getByRole('img', { name: /Writes per day/ }).waitFor();
        if (hash === 'memories') await page.getByTestId('page-status').waitFor();
        if (hash === 'webhooks') {
          await page.getByRole('button', { name: 'Deliveries' }).click();
          await page.locator('tr', { hasText: 'memory.created' }).waitFor();
        }
        await shot(`mobile-${hash}`);
        expect(await fitsWidth(), `${hash} overflows 390 px`).toBe(true);
      }
      expect(await page.getByRole('link', { name: 'Usage', exact: true }).isVisible()).toBe(false);
      await page.getByRole('button', { name: /Menu/ }).click();
      await page.getByRole('link', { name: 'Usage', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
      await page.setViewportSize(DESKTOP);
    }, 60_000);

    it('sends an ended session back to sign-in, without the API’s words', async () => {
      await page.setViewportSize(DESKTOP);
      await go('keys', 'API keys');
      // The session ends on the server (as when it expires): its cookie is refused from now on.
      const cookies = await context.cookies();
      const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      const csrf = cookies.find((c) => c.name === 'svc_dash_csrf')?.value ?? '';
      const logout = await fetch(`${server.baseUrl}/v1/dashboard/logout`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': decodeURIComponent(csrf), origin: server.baseUrl },
      });
      expect(logout.status).toBe(200);
      await page.getByRole('link', { name: 'Memories', exact: true }).click();
      await page.getByRole('heading', { name: 'Sign in to Mnemo' }).waitFor();
      expect(await page.getByRole('alert').textContent()).toMatch(/session has ended/);
      expect(await page.content()).not.toMatch(/UNAUTHORIZED|Missing API key/);
      await shot('08-session-ended');

      // The key minted earlier still works for apps: revoking it is a console action, not a sign-out.
      expect((await api('/v1/usage/today')).status).toBe(200);
    });
  },
);

import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { requestDeadline } from '../../src/http/deadline.js';
import { fencedCommit } from '../../src/services/deadline-fence.js';

const DEADLINE_MS = 150;
const GRACE_MS = 1000;
const never = () => new Promise<never>(() => {});

let close: (() => void) | undefined;
afterEach(() => close?.());

/** Serves one POST route behind the deadline and returns its answer and how long it took. */
async function answerOf(handler: RequestHandler) {
  const app = express();
  app.use((req, _res, next) => {
    req.requestId = 'test-request';
    next();
  });
  app.use(requestDeadline({ ms: DEADLINE_MS, graceMs: GRACE_MS }));
  app.post('/write', handler);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  close = () => server.closeAllConnections();
  const { port } = server.address() as AddressInfo;
  const started = Date.now();
  const response = await fetch(`http://127.0.0.1:${port}/write`, { method: 'POST' });
  const body = (await response.json()) as {
    error?: { code: string; message: string; details?: { outcome?: string[] } };
  };
  server.close();
  return { status: response.status, body, ms: Date.now() - started };
}

describe('request deadline', () => {
  it('answers "not written" at the deadline when no commit started', async () => {
    const { status, body, ms } = await answerOf(() => void never());
    expect(status).toBe(503);
    expect(body.error?.message).toMatch(/nothing was written/);
    expect(body.error?.details).toBeUndefined();
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    expect(ms).toBeLessThan(DEADLINE_MS + GRACE_MS);
  });

  it('bounds a commit that never returns: outcome unknown one grace period after the deadline', async () => {
    const { status, body, ms } = await answerOf(() => void fencedCommit(never));
    expect(status).toBe(503);
    expect(body.error?.details?.outcome).toEqual(['unknown']);
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS + GRACE_MS - 5);
    expect(ms).toBeLessThan(DEADLINE_MS + GRACE_MS + 500);
  });

  it('waits for the handler after a commit finished, and takes its own answer when it comes', async () => {
    const { status, ms } = await answerOf((_req, res) => {
      void fencedCommit(async () => 'stored').then(async () => {
        await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + GRACE_MS / 2));
        res.json({ stored: true });
      });
    });
    expect(status).toBe(200);
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS + GRACE_MS / 2 - 5);
  });

  it('refuses a commit that would start after the deadline', async () => {
    let started = false;
    const { status, body } = await answerOf((_req, res, next) => {
      setTimeout(() => {
        fencedCommit(async () => {
          started = true;
        }).then(() => res.json({ stored: true }), next);
      }, DEADLINE_MS + 50);
    });
    expect(status).toBe(503);
    expect(body.error?.details).toBeUndefined();
    expect(started).toBe(false);
  });
});

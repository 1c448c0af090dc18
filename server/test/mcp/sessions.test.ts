import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { McpSessionStore } from '../../src/mcp/sessions.js';
import { toolCatalog } from '../../src/mcp/server.js';
import { TOOLS } from '../../src/mcp/tools.js';

const ALICE = { workspaceId: 'w1', apiKeyId: 'k1' };

describe('McpSessionStore (in memory)', () => {
  const logger = createLogger('silent');

  it('finds a session only for the workspace and key that opened it', async () => {
    const store = new McpSessionStore({ ttlMs: 60_000, maxSessions: 10, logger });
    const id = await store.open(ALICE);
    expect(await store.find(id, ALICE)).toBe(true);
    expect(await store.find(id, { workspaceId: 'w2', apiKeyId: 'k9' })).toBe(false);
    expect(await store.find(id, { workspaceId: 'w1', apiKeyId: 'k2' })).toBe(false);
    expect(await store.find('nope', ALICE)).toBe(false);
    // Another workspace cannot end it either.
    expect(await store.close(id, { workspaceId: 'w2', apiKeyId: 'k9' })).toBe(false);
    expect(await store.close(id, ALICE)).toBe(true);
    expect(await store.find(id, ALICE)).toBe(false);
    await store.closeAll();
  });

  it('forgets the least recently used session when full', async () => {
    const store = new McpSessionStore({ ttlMs: 60_000, maxSessions: 2, logger });
    const a = await store.open(ALICE);
    const b = await store.open(ALICE);
    expect(await store.find(a, ALICE)).toBe(true); // a was used after b
    const c = await store.open(ALICE);
    expect(store.size).toBe(2);
    expect(await store.find(b, ALICE)).toBe(false);
    expect(await store.find(a, ALICE)).toBe(true);
    expect(await store.find(c, ALICE)).toBe(true);
    await store.closeAll();
  });

  it('forgets a session idle past the TTL; each use restarts its idle time', async () => {
    let now = 0;
    const store = new McpSessionStore({ ttlMs: 1_000, maxSessions: 10, logger, now: () => now });
    const used = await store.open(ALICE);
    const idle = await store.open(ALICE);
    now = 900;
    expect(await store.find(used, ALICE)).toBe(true);
    now = 1_500;
    expect(await store.find(idle, ALICE)).toBe(false);
    expect(await store.find(used, ALICE)).toBe(true);
    await store.closeAll();
  });

  it('ends every open stream on shutdown', async () => {
    const store = new McpSessionStore({ ttlMs: 60_000, maxSessions: 10, logger });
    const closed: string[] = [];
    store.track({ close: async () => void closed.push('x') });
    const untrack = store.track({ close: async () => void closed.push('y') });
    untrack(); // its request ended before
    await store.closeAll();
    expect(closed).toEqual(['x']);
  });
});

describe('tool catalog', () => {
  it('describes every input field of every tool for the model', () => {
    for (const tool of TOOLS) {
      for (const [field, schema] of Object.entries(tool.input.shape)) {
        expect(
          (schema as { description?: string }).description,
          `${tool.name}.${field}`,
        ).toBeTruthy();
      }
    }
  });

  it('lists JSON Schemas without $ref: closed inputs, open outputs', () => {
    for (const tool of toolCatalog()) {
      expect(JSON.stringify(tool.inputSchema)).not.toContain('$ref');
      expect(JSON.stringify(tool.outputSchema)).not.toContain('$ref');
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.outputSchema?.type).toBe('object');
      // Output schemas name the contract's fields without forbidding others.
      expect(JSON.stringify(tool.outputSchema)).not.toContain('"additionalProperties":false');
    }
  });
});

import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { McpSessionStore, type McpSession } from '../../src/mcp/sessions.js';
import { toolCatalog } from '../../src/mcp/server.js';
import { TOOLS } from '../../src/mcp/tools.js';

function fakeSession(
  id: string,
  workspaceId = 'w1',
  apiKeyId: string | null = 'k1',
): McpSession & { closed: () => boolean } {
  const close = vi.fn(async () => undefined);
  return {
    id,
    binding: { workspaceId, apiKeyId },
    server: { close } as unknown as McpSession['server'],
    transport: {} as McpSession['transport'],
    lastSeenAt: 0,
    inflight: 0,
    closed: () => close.mock.calls.length > 0,
  };
}

describe('McpSessionStore', () => {
  const logger = createLogger('silent');

  it('finds a session only for the workspace and key that opened it', () => {
    const store = new McpSessionStore({ ttlMs: 60_000, maxSessions: 10, logger });
    store.add(fakeSession('s1', 'w1', 'k1'));
    expect(store.find('s1', { workspaceId: 'w1', apiKeyId: 'k1' })?.id).toBe('s1');
    expect(store.find('s1', { workspaceId: 'w2', apiKeyId: 'k9' })).toBeUndefined();
    expect(store.find('s1', { workspaceId: 'w1', apiKeyId: 'k2' })).toBeUndefined();
    expect(store.find('nope', { workspaceId: 'w1', apiKeyId: 'k1' })).toBeUndefined();
    void store.closeAll();
  });

  it('closes the least recently used session when full', () => {
    const store = new McpSessionStore({ ttlMs: 60_000, maxSessions: 2, logger });
    const [a, b, c] = [fakeSession('a'), fakeSession('b'), fakeSession('c')];
    store.add(a);
    store.add(b);
    store.begin(a)(); // a was used after b
    store.add(c);
    expect(store.size).toBe(2);
    expect(b.closed()).toBe(true);
    expect(a.closed()).toBe(false);
    expect(store.find('a', a.binding)).toBeDefined();
    void store.closeAll();
  });

  it('sweeps sessions idle past the TTL, but not one with a request in progress', () => {
    let now = 0;
    const store = new McpSessionStore({ ttlMs: 1_000, maxSessions: 10, logger, now: () => now });
    const [idle, busy] = [fakeSession('idle'), fakeSession('busy')];
    store.add(idle);
    store.add(busy);
    const end = store.begin(busy); // e.g. an open GET event stream
    now = 5_000;
    expect(store.sweep()).toBe(1);
    expect(idle.closed()).toBe(true);
    expect(busy.closed()).toBe(false);
    end();
    now = 5_500;
    expect(store.sweep()).toBe(0); // ended 500 ms ago
    now = 7_000;
    expect(store.sweep()).toBe(1);
    expect(store.size).toBe(0);
  });

  it('closes every session on shutdown', async () => {
    const store = new McpSessionStore({ ttlMs: 60_000, maxSessions: 10, logger });
    const sessions = [fakeSession('x'), fakeSession('y')];
    sessions.forEach((session) => store.add(session));
    await store.closeAll();
    expect(sessions.every((session) => session.closed())).toBe(true);
    expect(store.size).toBe(0);
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

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('MCP, internal-auth and proxy configuration', () => {
  it('defaults to 120 requests a minute, 30-minute sessions, 1000 sessions, no internal secret, no proxy', () => {
    expect(loadConfig({})).toMatchObject({
      mcp: { rateLimitPerMinute: 120, sessionTtlMs: 1_800_000, maxSessions: 1000 },
      internalSecret: undefined,
      trustProxy: false,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      MNEMO_MCP_RATE_LIMIT_PER_MINUTE: '30',
      MNEMO_MCP_SESSION_TTL_MS: '60000',
      MNEMO_MCP_MAX_SESSIONS: '5',
      MNEMO_INTERNAL_SECRET: 'a-long-enough-secret',
      MNEMO_TRUST_PROXY: 'true',
    });
    expect(config.mcp).toEqual({ rateLimitPerMinute: 30, sessionTtlMs: 60_000, maxSessions: 5 });
    expect(config.internalSecret).toBe('a-long-enough-secret');
    expect(config.trustProxy).toBe(true);
  });

  it('passes trust proxy hop counts and address lists to Express', () => {
    expect(loadConfig({ MNEMO_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ MNEMO_TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe(
      'loopback, 10.0.0.0/8',
    );
    expect(loadConfig({ MNEMO_TRUST_PROXY: 'FALSE' }).trustProxy).toBe(false);
    expect(loadConfig({ MNEMO_TRUST_PROXY: ' ' }).trustProxy).toBe(false);
  });

  it('refuses a short internal secret and limits below one', () => {
    expect(() => loadConfig({ MNEMO_INTERNAL_SECRET: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ MNEMO_MCP_RATE_LIMIT_PER_MINUTE: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ MNEMO_MCP_MAX_SESSIONS: '0' })).toThrow(ConfigError);
  });
});

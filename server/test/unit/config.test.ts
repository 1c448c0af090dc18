import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createEmbeddingProvider } from '../../src/providers/embeddings/index.js';

describe('loadConfig', () => {
  it('defaults to embedded PGlite on port 8787 with a 1 MB body limit', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: '.mnemo-data',
      allowedOrigins: [],
      maxBodyBytes: 1_048_576,
      apiKeySalt: undefined,
      bootstrapApiKey: undefined,
      bootstrapWorkspaceName: 'default',
      embeddings: { provider: 'local', model: 'mnemo-local-v3' },
      dedupe: { nearThreshold: 0.9, semanticThreshold: 0.95 },
    });
  });

  it('reads every variable and normalises the origin list', () => {
    const config = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgres://u@h/db',
      MNEMO_ALLOWED_ORIGINS: ' https://a.example/ ,http://localhost:3000,, ',
      MNEMO_MAX_BODY_BYTES: '4096',
      MNEMO_BOOTSTRAP_API_KEY: 'mnemo_0123456789abcdefghij',
      MNEMO_EMBEDDINGS_PROVIDER: 'openai',
    });
    expect(config.port).toBe(9000);
    expect(config.databaseUrl).toBe('postgres://u@h/db');
    expect(config.allowedOrigins).toEqual(['https://a.example', 'http://localhost:3000']);
    expect(config.maxBodyBytes).toBe(4096);
    expect(config.embeddings).toMatchObject({
      provider: 'openai',
      model: 'text-embedding-3-small',
      dimensions: 1536,
      sendDimensions: false,
    });
  });

  it('runs the local embedder MNEMO_EMBEDDINGS_MODEL names, and refuses one it does not have', () => {
    const lexical = loadConfig({ MNEMO_EMBEDDINGS_MODEL: 'mnemo-local-v2' });
    expect(lexical.embeddings.wordVectors).toBe('off');
    const provider = createEmbeddingProvider(lexical.embeddings);
    expect([provider.model, provider.dimension]).toEqual(['mnemo-local-v2', 256]);
    expect(loadConfig({ MNEMO_EMBEDDINGS_MODEL: 'mnemo-local-v3' }).embeddings.wordVectors).toBe(
      undefined,
    );

    const refused = (env: Record<string, string>, ...parts: string[]) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      try {
        loadConfig(env);
      } catch (error) {
        for (const part of parts) expect((error as Error).message).toContain(part);
      }
    };
    refused(
      { MNEMO_EMBEDDINGS_MODEL: 'text-embedding-3-small' },
      'MNEMO_EMBEDDINGS_MODEL',
      'not text-embedding-3-small',
      'MNEMO_EMBEDDINGS_PROVIDER=openai',
    );
    refused(
      { MNEMO_EMBEDDINGS_MODEL: 'mnemo-local-v3', MNEMO_EMBEDDINGS_WORD_VECTORS: 'off' },
      'MNEMO_EMBEDDINGS_WORD_VECTORS=off',
    );
    refused(
      { MNEMO_EMBEDDINGS_MODEL: 'mnemo-local-v2', MNEMO_EMBEDDINGS_WORD_VECTORS: 'on' },
      'MNEMO_EMBEDDINGS_WORD_VECTORS=on',
    );
    // Another provider's models are its own business.
    expect(
      loadConfig({ MNEMO_EMBEDDINGS_PROVIDER: 'openai', MNEMO_EMBEDDINGS_MODEL: 'bge-m3' })
        .embeddings.model,
    ).toBe('bge-m3');
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '  ', MNEMO_API_KEY_SALT: '' })).toMatchObject({
      databaseUrl: undefined,
      apiKeySalt: undefined,
    });
  });

  it('refuses invalid values with a message naming each variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', MNEMO_BOOTSTRAP_API_KEY: 'short' })).toThrow(
      ConfigError,
    );
    try {
      loadConfig({ PORT: 'eighty', MNEMO_BOOTSTRAP_API_KEY: 'short' });
    } catch (error) {
      expect((error as Error).message).toContain('PORT');
      expect((error as Error).message).toContain('MNEMO_BOOTSTRAP_API_KEY');
    }
  });
});

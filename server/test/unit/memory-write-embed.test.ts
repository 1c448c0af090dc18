import { describe, expect, it, vi } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { EmbeddingError, type EmbeddingProvider } from '../../src/providers/embeddings/index.js';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { OpenAIEmbeddingProvider } from '../../src/providers/embeddings/openai.js';
import { embed } from '../../src/services/memory-write/embed.js';

describe('embed: vectors for a write', () => {
  const local = new LocalEmbeddingProvider();

  it('embeds chunks as documents', async () => {
    const spy = vi.spyOn(local, 'embed');
    const vectors = await embed(local, ['coffee', 'tea']);
    expect(spy).toHaveBeenCalledWith(['coffee', 'tea'], 'document');
    expect(vectors).toEqual([local.embedOne('coffee'), local.embedOne('tea')]);
    spy.mockRestore();
  });

  it('turns a provider failure into INTERNAL, and lets anything else through', async () => {
    const failing = (error: Error): EmbeddingProvider => ({
      provider: 'x',
      model: 'x',
      version: 'x',
      dimension: 2,
      embed: () => Promise.reject(error),
    });
    const upstream = embed(failing(new EmbeddingError('openai embeddings answered 503', 503)), [
      'a',
    ]);
    await expect(upstream).rejects.toThrow(ServiceError);
    await expect(upstream).rejects.toMatchObject({
      code: 'INTERNAL',
      message: 'Embedding failed: openai embeddings answered 503',
    });
    await expect(embed(failing(new RangeError('bug')), ['a'])).rejects.toThrow(RangeError);
  });

  it('knows which providers embed in-process: the write embeds those before its lookup', () => {
    expect(local.inProcess).toBe(true);
    const remote = new OpenAIEmbeddingProvider({
      baseUrl: 'https://llm.test/v1',
      model: 'text-embedding-3-small',
      dimension: 8,
    });
    expect(remote.inProcess).toBe(false);
  });
});

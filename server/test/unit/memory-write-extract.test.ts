import { describe, expect, it } from 'vitest';
import {
  ExtractionError,
  type ExtractedMemory,
  type Extractor,
} from '../../src/providers/extraction/index.js';
import {
  chunkChildren,
  extract,
  MAX_CHILDREN,
  MIN_IMPORTANCE_TO_EXTRACT,
} from '../../src/services/memory-write/extract.js';

/** An extractor that answers `found` (or throws it) and records what it was asked. */
function fakeExtractor(found: ExtractedMemory[] | Error): Extractor & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  return {
    name: 'fake',
    calls,
    extract: (...args) => {
      calls.push(args);
      return found instanceof Error ? Promise.reject(found) : Promise.resolve(found);
    },
  };
}

const fact = (text: string): ExtractedMemory => ({ text, memoryType: 'fact' });

describe('extract: the extraction stage', () => {
  const text = 'Alice lives in Berlin. Alice loves jazz.';

  it('skips, without asking the extractor, when the caller turned extraction off', async () => {
    const extractor = fakeExtractor([fact('Alice loves jazz.')]);
    expect(await extract(extractor, { text, extract: false })).toEqual({
      outcome: { status: 'skipped', reason: 'user_disabled' },
      children: [],
    });
    expect(extractor.calls).toEqual([]);
  });

  it('skips a memory below the importance worth splitting', async () => {
    const extractor = fakeExtractor([fact('Alice loves jazz.')]);
    expect(await extract(extractor, { text, importance: 0.05 })).toEqual({
      outcome: { status: 'skipped', reason: 'low_importance' },
      children: [],
    });
    expect(extractor.calls).toEqual([]);
    const atThreshold = await extract(extractor, { text, importance: MIN_IMPORTANCE_TO_EXTRACT });
    expect(atThreshold.outcome).toEqual({ status: 'run' });
  });

  it('skips when no extractor is configured', async () => {
    expect(await extract(undefined, { text })).toEqual({
      outcome: { status: 'skipped', reason: 'none' },
      children: [],
    });
  });

  it('runs, asking for at most MAX_CHILDREN and dropping children that restate the parent or each other', async () => {
    const extractor = fakeExtractor([
      fact('Alice lives in Berlin.'),
      fact('alice LIVES in berlin'),
      fact(text),
      fact('Alice loves jazz.'),
    ]);
    expect(await extract(extractor, { text })).toEqual({
      outcome: { status: 'run' },
      children: [fact('Alice lives in Berlin.'), fact('Alice loves jazz.')],
    });
    expect(extractor.calls).toEqual([[text, { maxItems: MAX_CHILDREN }]]);
  });

  it('keeps no more than MAX_CHILDREN, whatever the extractor answers', async () => {
    const many = Array.from({ length: MAX_CHILDREN + 5 }, (_, i) => fact(`Fact number ${i}.`));
    const { children } = await extract(fakeExtractor(many), { text });
    expect(children).toEqual(many.slice(0, MAX_CHILDREN));
  });

  it('degrades, storing the parent alone, when the extractor fails', async () => {
    const failing = fakeExtractor(new ExtractionError('openai extraction timed out after 8000ms'));
    expect(await extract(failing, { text })).toEqual({
      outcome: {
        status: 'degraded',
        reason: 'extraction_error',
        error: 'openai extraction timed out after 8000ms',
      },
      children: [],
    });
  });

  it('lets a bug (not an ExtractionError) fail the write', async () => {
    const buggy = fakeExtractor(new TypeError('cannot read x of undefined'));
    await expect(extract(buggy, { text })).rejects.toThrow(TypeError);
  });

  it('chunks children with the balanced profile, one list per child', () => {
    expect(chunkChildren([fact('Alice loves jazz.'), fact('Bob drives.')])).toEqual([
      ['Alice loves jazz.'],
      ['Bob drives.'],
    ]);
  });
});

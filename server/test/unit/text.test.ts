import { describe, expect, it } from 'vitest';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { canonicalHash, canonicalText, lexicalSimilarity } from '../../src/text/canonical.js';
import { scanPii } from '../../src/text/pii.js';
import { stem, stemsMeet, tokensOf, words } from '../../src/text/tokens.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);

describe('local embedding provider', () => {
  const provider = new LocalEmbeddingProvider();

  it('is deterministic, unit length and of its declared dimension', async () => {
    const [a, b] = await provider.embed(
      ['Alice prefers oat milk', 'Alice prefers oat milk'],
      'document',
    );
    expect(a).toEqual(b);
    expect(a).toHaveLength(provider.dimension);
    expect(Math.hypot(...(a ?? []))).toBeCloseTo(1, 10);
    expect(provider.version).toBe('local:mnemo-local-v2:256');
  });

  it('ranks related text above unrelated text', () => {
    const memory = provider.embedOne('Jane moved to Berlin last spring');
    const related = provider.embedOne('Where does Jane live now? She moved to Berlin');
    const unrelated = provider.embedOne('The quarterly invoice is overdue');
    expect(cosine(memory, related)).toBeGreaterThan(0.3);
    expect(cosine(memory, related)).toBeGreaterThan(cosine(memory, unrelated) + 0.2);
  });

  it('gives text of stopwords or symbols only a direction', () => {
    for (const text of ['is it?', '!!!', '42']) {
      expect(Math.hypot(...provider.embedOne(text))).toBeCloseTo(1, 10);
    }
  });
});

describe('canonical text and dedupe similarity', () => {
  it('folds case, punctuation and spacing', () => {
    expect(canonicalText('  Hello,   WORLD!! ')).toBe('hello world');
    expect(canonicalHash('Hello, world')).toBe(canonicalHash('hello world!'));
    expect(canonicalHash('hello world')).not.toBe(canonicalHash('hello word'));
  });

  it('scores near duplicates high and reordered or different text low', () => {
    expect(
      lexicalSimilarity(
        'Frank drives a blue Volvo to work',
        'Frank drives a blue Volvo to work today',
      ),
    ).toBeGreaterThan(0.8);
    expect(lexicalSimilarity('dog bites man', 'man bites dog')).toBeLessThan(0.6);
    expect(lexicalSimilarity('I like tea', 'Bob plays chess')).toBe(0);
  });

  it('stems the forms a memory is written in, as PostgreSQL english does (Porter2)', () => {
    expect(['moved', 'moving', 'moves'].map(stem)).toEqual(['move', 'move', 'move']);
    expect(['cities', 'city', 'loved', 'hiking', 'running', 'generously'].map(stem)).toEqual([
      'citi',
      'citi',
      'love',
      'hike',
      'run',
      'generous',
    ]);
    expect(stem('2023')).toBe('2023');
  });

  it('joins word families by right truncation, from five letters on', () => {
    expect(stemsMeet(stem('allergies'), stem('allergic'))).toBe(true);
    expect(stemsMeet(stem('allergic'), stem('allergy'))).toBe(true);
    expect(stemsMeet(stem('musician'), stem('music'))).toBe(true);
    // Short stems and mere shared beginnings stay apart.
    expect(stemsMeet(stem('art'), stem('artist'))).toBe(false);
    expect(stemsMeet(stem('concert'), stem('concern'))).toBe(false);
    // Either side may be the shorter one; equal lengths meet only when equal.
    expect(stemsMeet('music', 'musician')).toBe(true);
    expect(stemsMeet('musician', 'music')).toBe(true);
    expect(stemsMeet('music', 'musid')).toBe(false);
  });

  it('cuts ASCII text as it cuts any other', () => {
    // The same words through the ASCII path and, with one character past ASCII, the other.
    for (const text of [
      "Don't MOVE the 2nd box; it's Anna's (room 12b) -- ok?",
      "'quoted' words, trailing' and o'clock",
      'tabs\tand\nnewlines, CamelCase and x86_64',
    ]) {
      const ascii = words(text);
      expect(words(`${text} é`)).toEqual([...ascii, 'é']);
    }
    expect(words("Don't MOVE the 2nd box; it's Anna's")).toEqual([
      "don't",
      'move',
      'the',
      '2nd',
      'box',
      "it's",
      "anna's",
    ]);
  });

  it('cuts a text into its words and their stems, side by side', () => {
    const text = 'Her sister’s cities: moving, MOVED, 2023!';
    const tokens = tokensOf(text);
    expect(tokens.words).toEqual(['her', 'sister’s', 'cities', 'moving', 'moved', '2023']);
    expect(tokens.stems).toEqual(['her', 'sister', 'citi', 'move', 'move', '2023']);
    expect(tokens.words).toEqual(words(text));
  });
});

describe('PII hints', () => {
  it.each([
    ['mail me at a.b+c@example.co.uk', ['email']],
    ['call +1 (415) 555-0132 after 6', ['phone']],
    ['my number is 020 7946 0958', ['phone']],
    ['write to x@y.io or ring 4155550132', ['email', 'phone']],
    ['the meeting is on 2026-01-31 at 10:30', []],
    ['order 12345 shipped, 3.5 kg', []],
    ['nothing personal here', []],
  ])('%s → %j', (text, hints) => {
    expect(scanPii(text)).toEqual(hints);
  });
});

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createEmbeddingProvider, localWordVectors } from '../../src/providers/embeddings/index.js';
import {
  LOCAL_EMBEDDING_DIMENSION,
  LocalEmbeddingProvider,
} from '../../src/providers/embeddings/local.js';
import {
  DEFAULT_WORD_VECTORS_PATH,
  WordVectors,
  loadWordVectors,
} from '../../src/providers/embeddings/word-vectors.js';
import { testConfig } from '../support/app.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);

// The table is committed (server/assets): without it the checkout is broken, so these tests fail
// rather than skip.
const loaded = loadWordVectors();

describe('local embedder with word vectors (the committed table)', () => {
  it('finds the committed table, gzipped, and reads the same table uncompressed', () => {
    expect(loaded.table ? 'table' : loaded.reason).toBe('table');
    expect(loaded.table!.dimension).toBe(100);
    expect(loaded.table!.size).toBeGreaterThan(50_000);
    const plain = join(mkdtempSync(join(tmpdir(), 'mnemo-word-vectors-')), 'table.bin');
    writeFileSync(plain, gunzipSync(readFileSync(DEFAULT_WORD_VECTORS_PATH)));
    expect(loadWordVectors(plain).table?.fingerprint).toBe(loaded.table!.fingerprint);
  });

  const provider = new LocalEmbeddingProvider(loaded.table ? { wordVectors: loaded.table } : {});
  const similarity = (a: string, b: string) => cosine(provider.embedOne(a), provider.embedOne(b));

  it('is mnemo-local-v3: 384 dimensions, unit length, deterministic, versioned by its table', () => {
    expect(provider.model).toBe('mnemo-local-v3');
    expect(provider.dimension).toBe(384);
    expect(provider.version).toBe(`local:mnemo-local-v3.1:384:${loaded.table!.fingerprint}`);
    const [a, b] = [
      provider.embedOne('Alice plays the cello'),
      provider.embedOne('Alice plays the cello'),
    ];
    expect(a).toEqual(b);
    expect(a).toHaveLength(384);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    // Words the table does not know, stopwords only, symbols: still a direction.
    for (const text of ['is it?', '!!!', 'zzqxv blorft'])
      expect(Math.hypot(...provider.embedOne(text))).toBeCloseTo(1, 6);
  });

  it('meets word forms the stemmer keeps apart: "allergies" finds "allergic"', () => {
    const memory = 'I am allergic to peanuts';
    expect(similarity('allergies', memory)).toBeGreaterThan(0.2);
    expect(similarity('allergies', memory)).toBeGreaterThan(
      similarity('allergies', 'I went hiking in the mountains') + 0.2,
    );
    // The lexical embedder alone barely sees it.
    const lexical = new LocalEmbeddingProvider();
    expect(cosine(lexical.embedOne('allergies'), lexical.embedOne(memory))).toBeLessThan(0.1);
  });

  it('puts near-synonyms closer than unrelated words: "musical instrument" and "guitar"', () => {
    const guitar = similarity('musical instrument', 'I play the bass guitar');
    expect(guitar).toBeGreaterThan(0.2);
    for (const unrelated of [
      'I bought a new car',
      'My favourite food is pasta',
      'The invoice is overdue',
    ])
      expect(guitar).toBeGreaterThan(similarity('musical instrument', unrelated) + 0.15);
    expect(similarity('What pets does she have?', 'We adopted a puppy last week')).toBeGreaterThan(
      similarity('What pets does she have?', 'I finished my thesis last week') + 0.15,
    );
  });

  it('gives the word vectors the share of a text the table knows (SIF-weighted)', () => {
    const table = loaded.table!;
    expect(table.coverage(['bass', 'guitar'])).toBe(1);
    expect(table.coverage(['zzqxv', '5feceb66ffc86f38'])).toBe(0);
    expect(table.coverage([])).toBe(0);
    // Two words it knows, one code: about two thirds (a common word weighs less than a code).
    const coded = table.coverage(['carol', 'code', '5feceb66ffc86f38']);
    expect(coded).toBeGreaterThan(0.5);
    expect(coded).toBeLessThan(2 / 3);
    // Texts the table knows whole: half lexical, half word vectors, as chosen.
    const lexical = new LocalEmbeddingProvider();
    const [a, b] = ['Alice prefers oat milk', 'Alice prefers soy milk'];
    const parts = (text: string) => provider.embedOne(text).slice(LOCAL_EMBEDDING_DIMENSION);
    const semantic = cosine(parts(a), parts(b)) / Math.hypot(...parts(a)) / Math.hypot(...parts(b));
    expect(similarity(a, b)).toBeCloseTo(
      0.5 * cosine(lexical.embedOne(a), lexical.embedOne(b)) + 0.5 * semantic,
      6,
    );
  });

  it('does not take texts that differ only in a code it does not know for duplicates', () => {
    // pins.test writes these 50 and expects 50 memories: at word-vector share 0.5 whatever the
    // table knows, two of them met at 0.955, over the 0.95 semantic-dedupe threshold.
    const texts = Array.from(
      { length: 50 },
      (_, i) => `Carol code ${createHash('sha256').update(String(i)).digest('hex').slice(0, 16)}`,
    );
    const vectors = texts.map((text) => provider.embedOne(text));
    let closest = -1;
    for (let i = 0; i < vectors.length; i += 1)
      for (let j = 0; j < i; j += 1) closest = Math.max(closest, cosine(vectors[i]!, vectors[j]!));
    expect(closest).toBeLessThan(0.95);
    // Letters only: the code is still the third of the text that tells the two apart.
    const lexical = new LocalEmbeddingProvider();
    const [a, b] = ['Carol code qzxvbw', 'Carol code wjtrkp'];
    const words = cosine(lexical.embedOne(a), lexical.embedOne(b));
    expect(similarity(a, b)).toBeLessThan(words + 0.12);
    // A name it does not know does not hide the synonym beside it.
    expect(similarity('musical instrument', 'Xandrielle plays the bass guitar')).toBeGreaterThan(
      similarity('musical instrument', 'Xandrielle bought a new car') + 0.2,
    );
  });

  it('keeps exact wording ahead of mere relatedness', () => {
    expect(similarity('oat milk', 'Alice prefers oat milk')).toBeGreaterThan(
      similarity('oat milk', 'Alice prefers soy cream'),
    );
  });
});

describe('local embedder without the table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-word-vectors-'));

  it('falls back to the lexical mnemo-local-v2 and says why', () => {
    const warnings: string[] = [];
    const missing = join(dir, 'missing.bin');
    const provider = createEmbeddingProvider(
      { ...testConfig().embeddings, provider: 'local', wordVectors: missing },
      undefined,
      (message) => warnings.push(message),
    );
    expect(provider.version).toBe(`local:mnemo-local-v2:${LOCAL_EMBEDDING_DIMENSION}`);
    expect(provider.dimension).toBe(256);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`no table at ${missing}`);
  });

  it('is on unless told off (unset or on: the committed table); off, without a warning', () => {
    const warnings: string[] = [];
    expect(localWordVectors('off', (message) => warnings.push(message))).toBeUndefined();
    expect(
      createEmbeddingProvider({ ...testConfig().embeddings, wordVectors: 'off' }).version,
    ).toBe('local:mnemo-local-v2:256');
    expect(warnings).toEqual([]);
    const v3 = `local:mnemo-local-v3.1:384:${loaded.table!.fingerprint}`;
    expect(createEmbeddingProvider(testConfig().embeddings).version).toBe(v3);
    const on = createEmbeddingProvider({ ...testConfig().embeddings, wordVectors: 'on' });
    expect(on.version).toBe(v3);
  });

  it('refuses a truncated or foreign file', () => {
    const truncated = join(dir, 'truncated.bin');
    writeFileSync(truncated, gunzipSync(readFileSync(DEFAULT_WORD_VECTORS_PATH)).subarray(0, 4096));
    const result = loadWordVectors(truncated);
    expect(result.table).toBeUndefined();
    expect('reason' in result && result.reason).toContain('truncated');
    const notGzip = join(dir, 'table.bin.gz');
    writeFileSync(notGzip, 'not gzip at all');
    const unreadable = loadWordVectors(notGzip);
    expect(unreadable.table).toBeUndefined();
    expect('reason' in unreadable && unreadable.reason).toContain(notGzip);
    expect(() => new WordVectors(new TextEncoder().encode('not a table at all, really'))).toThrow(
      /not a word-vector table/,
    );
  });

  it('embeds exactly as before (the lexical part is v2 unchanged)', () => {
    const v2 = new LocalEmbeddingProvider();
    const v3 = new LocalEmbeddingProvider({ wordVectors: loaded.table! });
    const text = 'Jane moved to Berlin last spring';
    const lexical = v2.embedOne(text);
    const combined = v3.embedOne(text).slice(0, LOCAL_EMBEDDING_DIMENSION);
    const scale = Math.hypot(...combined);
    combined.forEach((value, i) => expect(value / scale).toBeCloseTo(lexical[i]!, 10));
  });
});

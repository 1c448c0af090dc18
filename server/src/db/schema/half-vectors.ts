/**
 * Embeddings as a `halfvec` column holds them. pgvector reads each number of a vector's text with
 * `strtof` (single precision) and rounds that to half precision, ties to even; the text sent here
 * is the shortest that reads back as that same half, so PostgreSQL stores exactly what the full
 * decimals of the double gave, from half the characters. Each vector is converted once
 * (cached by its array), whatever statements it is sent in or compared by.
 */

/** A vector rounded as a `halfvec` stores it, with its text input and its squared norm. */
export interface HalfVector {
  /** The stored numbers (half precision, held in doubles). */
  values: number[];
  /** Σ values[i]², summed in order (as `cosineSimilarity` sums it). */
  squaredNorm: number;
  /** pgvector's text input for the vector, e.g. `[0.1,-0.02502,0]`. */
  literal: string;
}

const cache = new WeakMap<readonly number[], HalfVector>();

/** The half-precision form of `vector` (computed once per array: do not mutate it after). */
export function halfVector(vector: readonly number[]): HalfVector {
  let half = cache.get(vector);
  if (!half) {
    half = convert(vector);
    cache.set(vector, half);
  }
  return half;
}

/** `vector` as the text input of a `halfvec` (the same stored value as its full decimals). */
export function halfvecLiteral(vector: readonly number[]): string {
  return halfVector(vector).literal;
}

/** pgvector's most dimensions (of `halfvec` too): the scratch space converts any vector. */
const MAX_DIMENSION = 16_000;
// Scratch space reused by every conversion: a typed array per vector is an allocation outside
// the heap, and their garbage cost more than the conversion.
const scratchSingles = new Float32Array(MAX_DIMENSION);
const scratchSingleBits = new Uint32Array(scratchSingles.buffer);
const scratchDoubles = new Float64Array(MAX_DIMENSION);
const scratchDoubleWords = new Uint32Array(scratchDoubles.buffer);

function convert(vector: readonly number[]): HalfVector {
  const length = vector.length;
  if (length > MAX_DIMENSION) return convertEach(vector);
  const values = new Array<number>(length);
  // Joined once: concatenation would leave a chain of 2 × length strings for the heap to hold.
  const texts = new Array<string>(length);
  // Every number to single precision at once (ties to even), and each double's bits beside it.
  scratchSingles.set(vector);
  scratchDoubles.set(vector);
  let squaredNorm = 0;
  for (let i = 0; i < length; i += 1) {
    const value = vector[i]!;
    // String(-0) is "0".
    const bits = value === 0 ? 0 : halfOfSingle(scratchSingleBits[i]!);
    let text: string;
    let half: number;
    if (bits < 0 || (scratchDoubleWords[2 * i + LOW_WORD]! & 0x1fffffff) === 0x10000000) {
      // Out of range or not a number (pgvector refuses both, as it refuses their decimals), or
      // perhaps halfway between two singles: the decimals themselves, read as they always were.
      text = String(value);
      const read = bits < 0 ? -1 : halfBits(value);
      half = read < 0 ? Math.fround(value) : HALF_VALUES[read]!;
    } else {
      text = halfText(bits);
      half = HALF_VALUES[bits]!;
    }
    values[i] = half;
    texts[i] = text;
    squaredNorm += half * half;
  }
  return { values, squaredNorm, literal: `[${texts.join(',')}]` };
}

/** A vector longer than pgvector takes (refused there): converted number by number. */
function convertEach(vector: readonly number[]): HalfVector {
  const values = vector.map((value) => {
    const bits = halfBits(value);
    return bits < 0 ? Math.fround(value) : HALF_VALUES[bits]!;
  });
  let squaredNorm = 0;
  for (const value of values) squaredNorm += value * value;
  return { values, squaredNorm, literal: `[${vector.join(',')}]` };
}

const single = new Float32Array(1);
const singleBits = new Uint32Array(single.buffer);
const double = new Float64Array(1);
const doubleWords = new Uint32Array(double.buffer);
const LOW_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;

/**
 * The half-precision bits pgvector stores for `String(value)`: `strtof`'s single-precision
 * number, rounded to half precision (ties to even) as its `Float4ToHalfUnchecked` does; -1 for a
 * value that is no finite half (pgvector refuses it).
 */
export function halfBits(value: number): number {
  // String(-0) is "0".
  if (value === 0) return 0;
  single[0] = value;
  let bits = singleBits[0]!;
  if (readsAmbiguously(value)) {
    // Halfway between two singles: strtof takes the one on the side of the decimals.
    const side = decimalsSide(value);
    if (side !== 0) {
      const roundedOut = Math.abs(single[0]!) > Math.abs(value);
      if (side > 0 && !roundedOut) bits += 1;
      if (side < 0 && roundedOut) bits -= 1;
    }
  }
  return halfOfSingle(bits);
}

/** A single-precision number's bits rounded to half precision, ties to even; -1 past the largest. */
function halfOfSingle(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return -1;
  if (exponent >= 113) {
    // A normal half (or beyond the largest): 10 of the 23 mantissa bits kept, the rest rounded.
    let half = ((exponent - 112) << 10) | (mantissa >>> 13);
    const rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half += 1;
    return half >= 0x7c00 ? -1 : sign | half;
  }
  // Below 2^-25 every value rounds to zero; above, a subnormal half counts steps of 2^-24.
  if (exponent < 102) return sign;
  const shift = 126 - exponent;
  const significand = mantissa | 0x800000;
  let steps = significand >>> shift;
  const rest = significand & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (rest > halfway || (rest === halfway && (steps & 1) === 1)) steps += 1;
  return sign | steps;
}

/**
 * Whether `value` lies exactly halfway between two single-precision numbers: `strtof` then reads
 * its shortest decimals (not the double itself) and may land on either.
 */
function readsAmbiguously(value: number): boolean {
  if (Math.fround(value) === value || !Number.isFinite(value)) return false;
  double[0] = value;
  // 29 of a double's 52 mantissa bits fall below a single's 23: halfway is 1 followed by zeros.
  return (doubleWords[LOW_WORD]! & 0x1fffffff) === 0x10000000;
}

/** The sign of |String(value)| − |value|, compared exactly. */
function decimalsSide(value: number): number {
  const [digitsPart = '', exponentPart = '0'] = String(Math.abs(value)).split('e');
  const [whole = '', fraction = ''] = digitsPart.split('.');
  let decimal = BigInt(whole + fraction);
  const power10 = Number(exponentPart) - fraction.length;
  double[0] = Math.abs(value);
  const high = doubleWords[1 - LOW_WORD]!;
  const biased = high >>> 20;
  let binary = (BigInt(high & 0xfffff) << 32n) | BigInt(doubleWords[LOW_WORD]!);
  // A normal double: the leading 1; a subnormal one: no leading 1, the exponent of the smallest.
  if (biased > 0) binary |= 1n << 52n;
  const power2 = Math.max(biased, 1) - 1075;
  if (power10 >= 0) decimal *= 10n ** BigInt(power10);
  else binary *= 10n ** BigInt(-power10);
  if (power2 >= 0) binary <<= BigInt(power2);
  else decimal <<= BigInt(-power2);
  return decimal > binary ? 1 : decimal < binary ? -1 : 0;
}

/** Every half's value, by its bits (NaN for the non-finite ones). */
const HALF_VALUES = (() => {
  const values = new Float64Array(0x10000);
  for (let bits = 0; bits < 0x10000; bits += 1) {
    const exponent = (bits >>> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    const magnitude =
      exponent === 0x1f
        ? Number.NaN
        : exponent === 0
          ? fraction * 2 ** -24
          : (1 + fraction / 1024) * 2 ** (exponent - 15);
    values[bits] = bits & 0x8000 ? -magnitude : magnitude;
  }
  return values;
})();

/** The value of a half's bits. */
export const halfValue = (bits: number): number => HALF_VALUES[bits]!;

/** Each half's text once worked out ('' until then; filled, so its elements stay fast). */
const HALF_TEXTS: string[] = Array.from({ length: 0x10000 }, () => '');

function halfText(bits: number): string {
  let text = HALF_TEXTS[bits]!;
  if (text === '') {
    text = shortestText(bits);
    HALF_TEXTS[bits] = text;
  }
  return text;
}

/**
 * The fewest significant digits that read back as this half: strictly inside its rounding
 * interval, with a single-precision step to spare on each side (strtof's own rounding), so the
 * decimal reads as this half whichever way that rounding goes.
 */
function shortestText(bits: number): string {
  const magnitudeBits = bits & 0x7fff;
  const sign = bits & 0x8000 ? '-' : '';
  if (magnitudeBits === 0) return `${sign}0`;
  const magnitude = HALF_VALUES[magnitudeBits]!;
  const below = HALF_VALUES[magnitudeBits - 1]!;
  // Past the largest half (65504) pgvector refuses from 65520 up: the midpoint to 65536.
  const above = magnitudeBits === 0x7bff ? 65536 : HALF_VALUES[magnitudeBits + 1]!;
  const spare = 2 ** (Math.floor(Math.log2(above)) - 23);
  const low = (below + magnitude) / 2 + spare;
  const high = (magnitude + above) / 2 - spare;
  for (let digits = 1; digits <= 17; digits += 1) {
    const text = magnitude.toPrecision(digits);
    const read = Number(text);
    if (read > low && read < high) return sign + text;
  }
  return sign + String(magnitude);
}

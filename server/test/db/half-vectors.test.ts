import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRows } from '../../src/db/client.js';
import { cosineOfHalves, cosineSimilarity } from '../../src/db/queries/vector.js';
import {
  halfBits,
  halfValue,
  halfVector,
  halfvecLiteral,
} from '../../src/db/schema/half-vectors.js';
import { toVectorLiteral } from '../../src/db/schema/index.js';
import { type TestDatabase, createTestDatabase, describeDb } from '../support/db.js';

/** Round to nearest, ties to even, at steps of 2^exponent: the plain arithmetic of IEEE rounding. */
function roundAt(value: number, exponent: number): number {
  const step = 2 ** exponent;
  const scaled = value / step;
  let rounded = Math.round(scaled);
  if (rounded - scaled === 0.5 && rounded % 2 !== 0) rounded -= 1;
  return rounded * step;
}

/** The half a value becomes through single precision, by arithmetic (no bit tricks). */
function referenceHalf(value: number): number {
  const single = Math.fround(value);
  if (single === 0) return 0;
  const magnitude = Math.abs(single);
  let exponent = Math.floor(Math.log2(magnitude));
  if (2 ** exponent > magnitude) exponent -= 1;
  else if (2 ** (exponent + 1) <= magnitude) exponent += 1;
  exponent = Math.max(exponent, -14);
  const half = roundAt(magnitude, exponent - 10);
  return Math.sign(single) * (half >= 65520 ? Infinity : half);
}

/** Deterministic doubles: a linear congruential stream mapped to -1..1. */
function stream(seed: number, count: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state / 2 ** 32) * 2 - 1;
  });
}

/** Values at and around every rounding boundary of half precision, and others. */
function hardValues(): number[] {
  const values: number[] = [0, 1, -1, 0.5, 1e-7, -1e-7, 2 ** -25, 3 * 2 ** -26, 2 ** -24, 65504];
  for (let bits = 1; bits < 0x7bff; bits += 7) {
    const low = halfValue(bits);
    const high = halfValue(bits + 1);
    const middle = (low + high) / 2;
    const singleStep = 2 ** (Math.floor(Math.log2(high)) - 23);
    values.push(low, middle, middle + singleStep / 4, middle - singleStep / 4);
    values.push(middle + singleStep / 2, middle - singleStep / 2, middle + singleStep);
    values.push(-middle, -(middle + singleStep));
  }
  return [...values, ...stream(7, 5000), ...stream(11, 2000).map((v) => v * 1e-4)];
}

describe('halfBits', () => {
  it('rounds through single precision to half precision, ties to even', () => {
    for (const value of hardValues()) {
      // Exactly halfway between two singles: strtof reads the decimals (the database test).
      const single = Math.fround(value);
      if (single !== value && Math.fround(2 * value - single) === 2 * value - single) continue;
      const bits = halfBits(value);
      const expected = referenceHalf(value);
      if (!Number.isFinite(expected)) expect(bits).toBe(-1);
      else expect(halfValue(bits)).toBe(expected);
    }
    expect(halfValue(halfBits(1 + 2 ** -11))).toBe(1); // a tie: to the even neighbour
    expect(halfValue(halfBits(1 + 3 * 2 ** -11))).toBe(1 + 2 ** -9);
    expect(halfValue(halfBits(0.1))).toBe(0.0999755859375);
    expect(halfBits(70000)).toBe(-1);
    expect(halfBits(Number.NaN)).toBe(-1);
  });

  it('prints each vector in few digits, and its squared norm as cosineSimilarity sums it', () => {
    const vector = stream(3, 384);
    const half = halfVector(vector);
    expect(halfVector(vector)).toBe(half);
    expect(half.literal.length).toBeLessThan(toVectorLiteral(vector).length / 2);
    const other = halfVector(stream(5, 384));
    expect(cosineOfHalves(half, other)).toBe(cosineSimilarity([...half.values], [...other.values]));
  });
});

describeDb('halfvec literals', () => {
  let handle: TestDatabase;
  beforeAll(async () => {
    handle = await createTestDatabase();
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('store the same half vector as the full decimals, and the values computed here', async () => {
    const values = hardValues();
    // Doubles exactly halfway between two singles, also where the two round to different halves.
    values.push(1 + 2 ** -24, -(1 + 2 ** -24), 1 + 2 ** -11 + 2 ** -24, 1 + 2 ** -11 - 2 ** -24);
    for (let start = 0; start < values.length; start += 1000) {
      const vector = values.slice(start, start + 1000);
      const [row] = await executeRows<{ full: string; short: string }>(
        handle.db,
        sql`select ${toVectorLiteral(vector)}::halfvec::text as full, ${halfvecLiteral(vector)}::halfvec::text as short`,
      );
      expect(row!.short).toBe(row!.full);
      const unsigned = (v: number) => (v === 0 ? 0 : v);
      // PostgreSQL prints each half as the shortest decimal of its single-precision value.
      const stored = row!.full
        .slice(1, -1)
        .split(',')
        .map((text) => unsigned(Math.fround(Number(text))));
      expect(stored).toEqual([...halfVector(vector).values].map(unsigned));
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { NearestMemory } from '../../src/db/queries/memory-writes.js';
import { cosineOfHalves } from '../../src/db/queries/vector.js';
import { halfVector } from '../../src/db/schema/half-vectors.js';
import { nearestWithBatch, type Stored } from '../../src/services/ingest/batch.js';
import { DEDUPE_CANDIDATES } from '../../src/services/memory-write/dedupe.js';

/** A deterministic stream in 0..1. */
function stream(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

function stored(id: string, vector: number[], live: boolean): Stored {
  return {
    id,
    live,
    child: false,
    storedBefore: false,
    contentHash: id,
    text: `text ${id}`,
    vector: halfVector(vector),
    chunkCount: 1,
    claimKeys: [],
    holder: {
      id,
      text: `text ${id}`,
      claims: [],
      effectiveAt: null,
      createdAt: new Date(0),
      confidence: null,
    },
  };
}

describe('nearestWithBatch', () => {
  it('keeps what sorting the whole list (stable) and taking the first ones keeps, ties included', () => {
    const random = stream(5);
    // Few distinct directions, so equal similarities (ties) are common.
    const directions = Array.from({ length: 4 }, () =>
      Array.from({ length: 16 }, () => random() - 0.5),
    );
    for (let round = 0; round < 200; round += 1) {
      const pick = () => directions[Math.floor(random() * directions.length)]!.slice();
      const batch = Array.from({ length: Math.floor(random() * 12) + 1 }, (_, i) =>
        stored(`b${i}`, pick(), random() < 0.8),
      );
      const query = pick();
      const fromDatabase: NearestMemory[] = Array.from(
        { length: Math.floor(random() * 6) },
        (_, i) => ({
          memoryId: `d${i}`,
          text: `stored ${i}`,
          similarity: Math.round(random() * 4) / 4,
          chunkCount: 1,
        }),
      ).sort((a, b) => b.similarity - a.similarity);
      const half = halfVector(query);
      const expected = [
        ...fromDatabase,
        ...batch
          .filter((s) => s.live)
          .map((s) => ({
            memoryId: s.id,
            text: s.text,
            similarity: cosineOfHalves(half, s.vector!),
            chunkCount: s.chunkCount,
          })),
      ]
        .sort((a, b) => b.similarity - a.similarity)
        .slice(0, DEDUPE_CANDIDATES);
      expect(nearestWithBatch(fromDatabase, batch, query)).toEqual(expected);
    }
  });
});

import type { MemoryClaim } from '../schema/index.js';

/**
 * A live memory of the space stating one of a new memory's claims: what `writeLookups` finds
 * and the lifecycle rules decide about. Its own module so that the write queries and the
 * lifecycle queries can share it without importing each other.
 */
export interface ClaimHolder {
  id: string;
  text: string;
  claims: MemoryClaim[];
  effectiveAt: Date | null;
  createdAt: Date;
  confidence: number | null;
}

/**
 * Read-your-writes across read replicas (docs/scaling.md). A write answered by a server with
 * read replicas carries this header: the primary's WAL position once the write committed. A read
 * that sends it back is served by a replica only once that replica has replayed past it, else by
 * the primary. The value is opaque to clients: send back the last one received, unchanged.
 */
export const CONSISTENCY_TOKEN_HEADER = 'mnemo-consistency-token';

/** A PostgreSQL WAL position as `pg_lsn` prints it: two hexadecimal halves. */
export const CONSISTENCY_TOKEN_PATTERN = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i;

/** Whether token `a` is at or past token `b` (both valid tokens). */
export function consistencyTokenAtLeast(a: string, b: string): boolean {
  return walPosition(a) >= walPosition(b);
}

/** The position as one number: high half × 2^32 + low half. */
export function walPosition(token: string): bigint {
  const [high = '0', low = '0'] = token.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

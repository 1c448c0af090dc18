import type { Logger } from '../logger.js';

/** Per logger, the optional capabilities currently failing (so each outage is logged once). */
const failing = new WeakMap<Logger, Set<string>>();

/**
 * The spec's degraded optional internals (What the service does, item 8): an optional step whose
 * storage is unavailable is skipped, not failed. The first failure of `capability` is logged;
 * later ones are not, until {@link capabilityRecovered} reports it back.
 */
export function capabilityUnavailable(logger: Logger, capability: string, error: unknown): void {
  let down = failing.get(logger);
  if (!down) failing.set(logger, (down = new Set()));
  if (down.has(capability)) return;
  down.add(capability);
  logger.warn(
    { err: error, capability },
    'optional capability unavailable; skipped until it recovers (logged once)',
  );
}

/** The capability worked again: a later failure is logged anew. */
export function capabilityRecovered(logger: Logger, capability: string): void {
  const down = failing.get(logger);
  if (down?.delete(capability)) logger.info({ capability }, 'optional capability recovered');
}

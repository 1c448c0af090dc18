import type { Writer } from '../../db/client.js';
import {
  claimDueDeliveries,
  endpointsBehind,
  fanOutEndpoint,
  recordAttempt,
  type ClaimedDelivery,
} from '../../db/queries/webhooks.js';
import type { Logger } from '../../logger.js';
import type { WebhooksConfig } from '../../config.js';
import { attemptDelivery, type AttemptResult } from './delivery.js';
import type { SecretBox } from './secrets.js';

/**
 * How long the fan-out floor trails the outbox: an event is only certain to be visible once every
 * transaction that could still insert a lower `seq` has ended, and writes end well within this.
 */
const FAN_OUT_SETTLE_MS = 5 * 60 * 1000;
/** Events fanned out to one endpoint per pass. */
const FAN_OUT_BATCH = 500;
/** Deliveries claimed and sent at once by one instance. */
const CLAIM_BATCH = 20;
/** Claim rounds per tick, so one tick ends even when deliveries keep coming. */
const MAX_ROUNDS = 50;
/** How long past its timeout an attempt's claim holds, before another instance may take it. */
const LEASE_MARGIN_MS = 30_000;

export interface DispatcherDeps {
  db: Writer;
  secrets: SecretBox;
  logger: Logger;
  config: Pick<
    WebhooksConfig,
    'timeoutMs' | 'maxAttempts' | 'retryBaseMs' | 'retryMaxMs' | 'allowPrivate'
  >;
  random?: () => number;
}

/** The wait before attempt `attempts + 1`: full jitter, random(0, min(max, base x 2^(n-1))). */
export function retryDelayMs(
  attempts: number,
  { retryBaseMs, retryMaxMs }: Pick<WebhooksConfig, 'retryBaseMs' | 'retryMaxMs'>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(retryMaxMs, retryBaseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(random() * ceiling);
}

/**
 * Delivers the outbox to webhook endpoints. Every step is a claim in the database (SKIP LOCKED),
 * so any number of server instances can run it side by side, each event going to each endpoint
 * once per attempt, and a restart loses nothing: the schedule is in the rows.
 */
export class WebhookDispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  /** One pass: fan new events out, then send what is due. */
  async tick(): Promise<void> {
    await this.fanOut();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const claimed = await claimDueDeliveries(this.deps.db, {
        limit: CLAIM_BATCH,
        leaseMs: this.deps.config.timeoutMs + LEASE_MARGIN_MS,
      });
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((claim) => this.deliver(claim)));
    }
  }

  private async fanOut(): Promise<void> {
    for (const { id } of await endpointsBehind(this.deps.db)) {
      await fanOutEndpoint(this.deps.db, id, {
        batch: FAN_OUT_BATCH,
        settleMs: FAN_OUT_SETTLE_MS,
      });
    }
  }

  private async deliver(claim: ClaimedDelivery): Promise<void> {
    const { config, logger } = this.deps;
    let result: AttemptResult;
    try {
      result = await attemptDelivery(claim, {
        secrets: this.deps.secrets,
        timeoutMs: config.timeoutMs,
        allowPrivate: config.allowPrivate,
      });
    } catch {
      // A secret that no longer opens (the key changed) or a URL that no longer parses.
      result = { ok: false, responseStatus: null, error: 'could not sign or address the request' };
    }
    const exhausted = claim.attempts >= config.maxAttempts;
    const status = result.ok ? 'succeeded' : exhausted ? 'failed' : 'pending';
    await recordAttempt(this.deps.db, claim, {
      status,
      responseStatus: result.responseStatus,
      error: result.error,
      retryAt:
        status === 'pending'
          ? new Date(Date.now() + retryDelayMs(claim.attempts, config, this.deps.random))
          : null,
    });
    if (!result.ok) {
      // Ids only: the URL may carry a token of the receiver's.
      logger.debug(
        { delivery_id: claim.id, attempts: claim.attempts, status, error: result.error },
        'webhook attempt failed',
      );
    }
  }
}

import { RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { warnStoreFailure, type Counter, type LimitBackend } from './backend.js';

const MINUTE_SECONDS = 60;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export interface AiCostLimiterOptions {
  backend: LimitBackend;
  /** Cost burst per workspace per minute, in micro-INR (the spec: 15 INR). */
  burstMicroInrPerMinute: number;
  /** The global AI budget; undefined: none. */
  budget: GlobalAiBudget | undefined;
  logger?: Logger;
}

/**
 * The AI-cost limits of an operation that spends provider money (writes, search, context, ingest,
 * replay), whichever door it came through: a cost that would take the workspace past its
 * per-minute cost burst is refused with `RATE_LIMITED`; one the global AI budget cannot pay for
 * with `COST_BUDGET_EXCEEDED`. Both carry `Retry-After`. A burst store outage lets the operation
 * through (logged): the limiter must not take the service down with it.
 */
export class AiCostLimiter {
  private readonly burst: Counter;

  constructor(private readonly options: AiCostLimiterOptions) {
    this.burst = options.backend.counter({
      name: 'cost-burst',
      points: options.burstMicroInrPerMinute,
      durationSeconds: MINUTE_SECONDS,
    });
  }

  /** Counts `cost` micro-INR against the workspace's burst and the global budget, or throws. */
  async charge(workspaceId: string, cost: number, requestId?: string): Promise<void> {
    if (cost <= 0) return;
    const { burstMicroInrPerMinute, budget, logger } = this.options;
    let burstCounted = false;
    try {
      await this.burst.consume(workspaceId, cost);
      burstCounted = true;
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) {
        // A refused request spends nothing: give its points back.
        await this.burst.reward(workspaceId, cost).catch(() => undefined);
        const retry = seconds(outcome.msBeforeNext);
        throw new ServiceError(
          'RATE_LIMITED',
          `AI cost burst exceeded: ${burstMicroInrPerMinute / 1e6} INR per minute per workspace; retry in ${retry} s`,
          undefined,
          { 'Retry-After': String(retry) },
        );
      }
      warnStoreFailure(logger, outcome, 'cost burst store failed; requests allowed', {
        request_id: requestId,
      });
    }
    try {
      await budget?.spend(cost);
    } catch (error) {
      if (burstCounted) await this.burst.reward(workspaceId, cost).catch(() => undefined);
      throw error;
    }
  }
}

export interface GlobalAiBudgetOptions {
  backend: LimitBackend;
  /** Micro-INR the whole installation may spend on AI providers per UTC day. */
  microInrPerDay: number;
  /** Refuse when the budget cannot be read (production) rather than spend blind. */
  failClosed: boolean;
  /** How long a read of the spent total is trusted (the spec: 60 s). */
  cacheMs?: number;
  now?: () => number;
  logger?: Logger;
}

/**
 * The installation's AI spend per day, across instances (on Redis). Reads of the total are cached
 * for a minute so the hot path rarely touches the store; each spend is added at once. When the
 * store cannot be read, production fails closed (`COST_BUDGET_EXCEEDED`), elsewhere it fails open.
 */
export class GlobalAiBudget {
  private readonly counter: Counter;
  private cached: { spent: number; at: number } | undefined;
  private readonly cacheMs: number;
  private readonly now: () => number;

  constructor(private readonly options: GlobalAiBudgetOptions) {
    // Points far above the budget: the counter only sums; the budget check is ours.
    this.counter = options.backend.counter({
      name: 'ai-budget',
      points: Number.MAX_SAFE_INTEGER,
      durationSeconds: 86_400,
    });
    this.cacheMs = options.cacheMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  private dayKey(): string {
    return new Date(this.now()).toISOString().slice(0, 10);
  }

  private secondsToMidnight(): number {
    const now = this.now();
    const midnight = new Date(now);
    midnight.setUTCHours(24, 0, 0, 0);
    return seconds(midnight.getTime() - now);
  }

  /** Throws `COST_BUDGET_EXCEEDED` when `cost` (micro-INR) more would pass the day's budget. */
  async spend(cost: number): Promise<void> {
    const { microInrPerDay, failClosed, logger } = this.options;
    try {
      const now = this.now();
      if (!this.cached || now - this.cached.at >= this.cacheMs) {
        const res = await this.counter.get(this.dayKey());
        this.cached = { spent: res?.consumedPoints ?? 0, at: now };
      }
      if (this.cached.spent + cost > microInrPerDay) {
        throw new ServiceError(
          'COST_BUDGET_EXCEEDED',
          `The installation's daily AI cost budget (${microInrPerDay / 1e6} INR) is spent`,
          undefined,
          { 'Retry-After': String(this.secondsToMidnight()) },
        );
      }
      const res = await this.counter.penalty(this.dayKey(), cost);
      this.cached = { spent: res.consumedPoints, at: this.cached.at };
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      warnStoreFailure(logger, error, 'AI budget store failed');
      if (failClosed) {
        throw new ServiceError(
          'COST_BUDGET_EXCEEDED',
          'The AI cost budget cannot be verified; AI-cost requests are refused until it can',
          undefined,
          { 'Retry-After': '60' },
        );
      }
    }
  }
}

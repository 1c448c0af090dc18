import {
  contract,
  type HealthResponse,
  type ReadyResponse,
  type VersionedHealthResponse,
} from '@mnemo/contract';
import type { AnonymousCaller, OperationContext } from './context.js';
import { defineOperation } from './operation.js';

type HealthContext = Pick<OperationContext, 'health'>;

/** GET /healthz: the process answers (no dependency is probed). */
export const getHealth = defineOperation<undefined, HealthResponse, HealthContext, AnonymousCaller>(
  'getHealth',
  contract.health.getHealth,
  async (ctx) => ({ output: ctx.health.health() }),
);

/** GET /v1/health: as /healthz, with the embedding model. */
export const getVersionedHealth = defineOperation<
  undefined,
  VersionedHealthResponse,
  HealthContext,
  AnonymousCaller
>('getVersionedHealth', contract.health.getVersionedHealth, async (ctx) => ({
  output: ctx.health.versionedHealth(),
}));

/** GET /ready: whether this instance should take traffic (the door answers 503 when not). */
export const getReadiness = defineOperation<
  undefined,
  ReadyResponse,
  HealthContext,
  AnonymousCaller
>('getReadiness', contract.health.getReadiness, async (ctx) => ({
  output: await ctx.health.readiness(),
}));

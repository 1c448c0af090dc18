import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter } from 'express';
import { mountContract } from '../http/mount.js';
import { anonymousCallerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

/** Liveness and readiness (public): a load balancer takes an instance out on a 503 from /ready. */
export function mountHealthRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'getHealth' | 'getVersionedHealth' | 'getReadiness'>,
): void {
  const implementation = s.router(contract.health, {
    getHealth: async ({ req }) => ({
      status: 200,
      body: await operations.getHealth(anonymousCallerOf(req, 'public'), undefined),
    }),
    getVersionedHealth: async ({ req }) => ({
      status: 200,
      body: await operations.getVersionedHealth(anonymousCallerOf(req, 'public'), undefined),
    }),
    getReadiness: async ({ req }) => {
      const body = await operations.getReadiness(anonymousCallerOf(req, 'public'), undefined);
      return body.status === 'ready' ? { status: 200, body } : { status: 503, body };
    },
  });
  mountContract(target, table, contract.health, implementation);
}

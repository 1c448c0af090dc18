import { contract } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import type { IRouter, RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

export function mountLinkRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'createLink' | 'listLinks' | 'deleteLink'>,
  middleware: RequestHandler[],
): void {
  const implementation = s.router(contract.links, {
    createLink: async ({ req, params, body }) => ({
      status: 200,
      body: await operations.createLink(callerOf(req, 'rest'), { id: params.id, link: body }),
    }),
    listLinks: async ({ req, params }) => ({
      status: 200,
      body: await operations.listLinks(callerOf(req, 'rest'), params),
    }),
    deleteLink: async ({ req, params, query }) => ({
      status: 200,
      body: await operations.deleteLink(callerOf(req, 'rest'), { id: params.id, query }),
    }),
  });
  mountContract(target, table, contract.links, implementation, middleware);
}

import { Readable } from 'node:stream';
import { contract, JSONL_CONTENT_TYPE } from '@mnemo/contract';
import { initServer } from '@ts-rest/express';
import express, { type IRouter, type RequestHandler } from 'express';
import { mountContract } from '../http/mount.js';
import { callerOf } from '../http/request-inputs.js';
import type { RouteTable } from '../http/route-table.js';
import type { Logger } from '../logger.js';
import type { Operations } from '../operations/index.js';

const s = initServer();

/** JSON Lines, one line per record, as the records are read. */
function jsonLines(records: AsyncIterable<unknown>): Readable {
  return Readable.from(
    (async function* () {
      for await (const record of records) yield `${JSON.stringify(record)}\n`;
    })(),
  );
}

export function mountOwnerDataRoutes(
  target: IRouter,
  table: RouteTable,
  operations: Pick<Operations, 'exportOwner' | 'importOwner' | 'eraseOwner'>,
  middleware: RequestHandler[],
  { logger, maxBodyBytes }: { logger: Logger; maxBodyBytes: number },
): void {
  // The import body is JSON Lines: read as text (the app's JSON parser leaves it alone).
  const linesBody = express.text({ type: JSONL_CONTENT_TYPE, limit: maxBodyBytes });
  const implementation = s.router(contract.ownerData, {
    exportOwner: async ({ req, res, query }) => {
      const { lines } = await operations.exportOwner(callerOf(req, 'rest'), query);
      const stream = jsonLines(lines);
      // Headers are gone by the time a later page fails: the stream is cut, and the missing end
      // line tells the client it is incomplete.
      stream.once('error', (error) => {
        logger.error({ err: error, requestId: req.requestId }, 'export stream failed');
        res.destroy();
      });
      res.setHeader('content-type', `${JSONL_CONTENT_TYPE}; charset=utf-8`);
      res.setHeader('cache-control', 'no-store');
      // ts-rest's Express adapter pipes a stream body to the response (its types only know the
      // schema's string).
      return { status: 200, body: stream as unknown as string };
    },
    importOwner: {
      middleware: [linesBody],
      handler: async ({ req, body, query }) => ({
        status: 200,
        body: await operations.importOwner(callerOf(req, 'rest'), {
          body,
          lineOffset: query.line_offset ?? 0,
        }),
      }),
    },
    eraseOwner: async ({ req, body }) => ({
      status: 200,
      body: await operations.eraseOwner(callerOf(req, 'rest'), body),
    }),
  });
  mountContract(target, table, contract.ownerData, implementation, middleware);
}

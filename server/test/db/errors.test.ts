import express from 'express';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type { Database, Reader } from '../../src/db/client.js';
import { Statement } from '../../src/db/queries/statement.js';
import { getOrCreateSetting } from '../../src/db/queries/settings.js';
import { DatabaseError, ServiceError } from '../../src/errors.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { requestId } from '../../src/http/request-id.js';
import type { Logger } from '../../src/logger.js';

/** A database whose reads never find the setting, as if it vanished after its insert. */
function forgetfulDatabase(): Database {
  const rows = { limit: async () => [] };
  return {
    select: () => ({ from: () => ({ where: () => rows }) }),
    insert: () => ({ values: () => ({ onConflictDoNothing: async () => undefined }) }),
  } as unknown as Database;
}

describe('query errors', () => {
  it('a query meeting an unexpected database answers with a DatabaseError, not a ServiceError', async () => {
    const failure = getOrCreateSetting(forgetfulDatabase(), 'instance_id', () => 'x');
    await expect(failure).rejects.toThrow(DatabaseError);
    await expect(failure).rejects.not.toBeInstanceOf(ServiceError);
    await expect(failure).rejects.toThrow('server setting instance_id vanished');
  });

  it('the HTTP layer logs a DatabaseError and answers 500 INTERNAL without its text', async () => {
    const logged = vi.fn();
    const logger = { error: logged } as unknown as Logger;
    const app = express();
    app.use(requestId());
    app.get('/boom', () => {
      throw new DatabaseError('insert into api_keys returned no row');
    });
    app.use(errorHandler({ logger, maxBodyBytes: 1024 }));

    const response = await request(app).get('/boom').expect(500);
    expect(response.body).toEqual({
      error: { code: 'INTERNAL', message: 'Internal server error' },
      request_id: response.headers['x-request-id'],
    });
    expect(JSON.stringify(response.body)).not.toContain('api_keys');
    expect(logged).toHaveBeenCalledOnce();
    expect(logged.mock.calls[0]?.[0]).toMatchObject({ err: expect.any(DatabaseError) });
  });
});

describe('hand-written statements', () => {
  it('a missing parameter rejects with a DatabaseError before anything is sent', async () => {
    const statement = new Statement<{ id: string }>('select :id::text as id');
    const nothingSent = {} as Reader;
    const failure = statement.read(nothingSent, {} as { id: string });
    await expect(failure).rejects.toThrow(DatabaseError);
    await expect(failure).rejects.toThrow('statement parameter :id is missing');
  });
});

import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  MnemoError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  errorFromResponse,
} from '../src/index.js';
import { envelope } from './fixtures.js';

describe('errorFromResponse', () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
    [504, InternalServerError],
    [405, MnemoError],
    [410, MnemoError],
  ])('maps status %i to %s', (status, ErrorClass) => {
    const error = errorFromResponse(status, envelope('ANY', 'message'), new Headers());
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(MnemoError);
    expect(error.status).toBe(status);
  });

  it('exposes Retry-After (seconds or a date) as retryAfterMs', () => {
    const limited = errorFromResponse(
      429,
      envelope('RATE_LIMITED', 'slow down'),
      new Headers({ 'retry-after': '7' }),
    );
    expect(limited.retryAfterMs).toBe(7000);
    const dated = errorFromResponse(
      503,
      envelope('ENTITLEMENT_DEGRADED', 'read-only for now'),
      new Headers({ 'retry-after': new Date(Date.now() + 30_000).toUTCString() }),
    );
    expect(dated.retryAfterMs).toBeGreaterThan(25_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(errorFromResponse(400, envelope('BAD_REQUEST', 'no'), new Headers()).retryAfterMs).toBe(
      undefined,
    );
  });

  it('keeps a code this client does not know yet', () => {
    const error = errorFromResponse(
      503,
      envelope('ENTITLEMENT_DEGRADED', 'read-only'),
      new Headers(),
    );
    expect(error).toMatchObject({ code: 'ENTITLEMENT_DEGRADED', message: 'read-only' });
  });

  it('falls back to x-request-id when the envelope has no request_id', () => {
    const body = { error: { code: 'RATE_LIMITED', message: 'slow down' } };
    const error = errorFromResponse(429, body, new Headers({ 'x-request-id': 'req_hdr' }));
    expect(error).toMatchObject({ code: 'RATE_LIMITED', requestId: 'req_hdr' });
  });

  it('prefers the envelope request_id over the header', () => {
    const error = errorFromResponse(
      401,
      envelope('UNAUTHORIZED', 'no', 'req_body'),
      new Headers({ 'x-request-id': 'req_hdr' }),
    );
    expect(error.requestId).toBe('req_body');
  });

  it.each([
    [undefined, 'HTTP 500'],
    ['', 'HTTP 500'],
    [{ message: 'not an envelope' }, 'HTTP 500: {"message":"not an envelope"}'],
    ['x'.repeat(400), `HTTP 500: ${'x'.repeat(300)}…`],
  ])('gives a generic code and message for a non-envelope body %#', (body, message) => {
    const error = errorFromResponse(500, body, new Headers());
    expect(error).toMatchObject({ code: 'HTTP_ERROR', message, requestId: undefined });
  });
});

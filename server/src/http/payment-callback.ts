import express, { type Request, type RequestHandler } from 'express';
import { ServiceError } from '../errors.js';
import type { IncomingCallback } from '../providers/payments/types.js';

export interface PaymentCallbackAuthOptions {
  /** Whether the callback's signature is valid; throws a ServiceError when billing is off. */
  verify: (callback: IncomingCallback) => boolean;
  /** The body limit (MNEMO_MAX_BODY_BYTES); a larger form is 413 PAYLOAD_TOO_LARGE. */
  maxBytes: number;
}

function formFields(req: Request): Record<string, string> | undefined {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    // A repeated field (`a=1&a=2`) is ambiguous: which one did the provider sign?
    if (typeof value !== 'string') return undefined;
    fields[name] = value;
  }
  return fields;
}

/**
 * The payment callback's auth (the spec's H), as route middleware: parses the form body
 * (urlencoded only, within the body limit, keeping the raw bytes), then requires a valid
 * provider signature, reverse hash over the fields or HMAC over the raw body. A missing or bad
 * signature is 401 and nothing is stored.
 */
export function paymentCallbackAuth({
  verify,
  maxBytes,
}: PaymentCallbackAuthOptions): RequestHandler[] {
  const parse = express.urlencoded({
    extended: false,
    limit: maxBytes,
    parameterLimit: 200,
    verify: (req, _res, buffer) => {
      (req as Request).rawBody = Buffer.from(buffer);
    },
  });
  return [
    parse,
    function paymentCallbackAuthMiddleware(req, _res, next) {
      try {
        const fields =
          req.rawBody && req.is('application/x-www-form-urlencoded') ? formFields(req) : undefined;
        if (!fields || !req.rawBody) {
          throw new ServiceError('BAD_REQUEST', 'The payment callback must be a form body', {
            body: ['must be application/x-www-form-urlencoded with one value per field'],
          });
        }
        const valid = verify({
          fields,
          rawBody: req.rawBody,
          header: (name) => req.get(name),
        });
        if (!valid) {
          throw new ServiceError('UNAUTHORIZED', 'Invalid or missing payment callback signature');
        }
        req.body = fields;
        next();
      } catch (error) {
        next(error);
      }
    },
  ];
}

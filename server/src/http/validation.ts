import { findUnstorableText } from '@mnemo/contract';
import type { RequestHandler } from 'express';
import type { ZodError, ZodIssue } from 'zod';
import { ServiceError, type ErrorDetails } from '../errors.js';

function issueMessage(issue: ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.received === 'undefined') return 'is required';
  if (issue.code === 'unrecognized_keys') return `unknown field(s): ${issue.keys.join(', ')}`;
  return issue.message;
}

/** Maps zod issues to `{ field: [messages] }`; `field` is the dotted path, or `fallback` at the root. */
export function zodDetails(
  error: ZodError,
  fallback: string,
  details: ErrorDetails = {},
): ErrorDetails {
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? issue.path.join('.') : fallback;
    (details[field] ??= []).push(issueMessage(issue));
  }
  return details;
}

export function validationError(details: ErrorDetails): ServiceError {
  const summary = Object.entries(details)
    .slice(0, 3)
    .map(([field, messages]) => `${field} ${messages[0] ?? 'is invalid'}`)
    .join('; ');
  return new ServiceError('BAD_REQUEST', `Invalid request: ${summary}`, details);
}

/**
 * The text rule (contract `schemas/text.ts`) on every parsed request input, before any route
 * sees it: a lone surrogate or NUL anywhere in the query or a parsed body, keys included, is a
 * 400 naming the field (as schema errors do: the dotted path, or `body` / `query` at the root). Schemas check their declared fields too; this covers fields a schema
 * passes through or a route added without `PgString`. Path parameters need no check here:
 * Express decodes them with `decodeURIComponent`, which refuses percent-encoded surrogates (a
 * URIError, answered 400) and the contract's parameter schemas refuse NUL.
 */
export function storableInput(): RequestHandler {
  return function storableInputMiddleware(req, _res, next) {
    const inputs: Array<[string, unknown]> = [
      ['query', req.query],
      ['body', req.body],
    ];
    for (const [where, value] of inputs) {
      const found = findUnstorableText(value);
      if (found) {
        const field = found.path.length > 0 ? found.path.join('.') : where;
        return next(validationError({ [field]: [found.message] }));
      }
    }
    next();
  };
}

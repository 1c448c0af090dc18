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

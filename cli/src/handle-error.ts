import { MnemoError } from '@mnemo/client';
import { ImportFailedError } from './commands/import.js';
import type { Output } from './output.js';

/** Exit codes: 1 the call failed, 2 the command line was wrong. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * The one place an error becomes output: one friendly line on stderr (`error CODE: message
 * (request_id ...)`), or a JSON object on stderr with `--json`, and the exit code to leave with.
 */
export function handleError(error: unknown, output: Output): number {
  // The summary is already printed; only the exit code is left to set.
  if (error instanceof ImportFailedError) return EXIT_FAILURE;

  if (error instanceof MnemoError) {
    if (output.json) {
      const body = {
        error: {
          code: error.code,
          message: error.message,
          status: error.status,
          details: error.details,
        },
        request_id: error.requestId,
      };
      output.error(JSON.stringify(body));
      return EXIT_FAILURE;
    }
    const requestId = error.requestId === undefined ? '' : ` (request_id ${error.requestId})`;
    const details = Object.entries(error.details ?? {})
      .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
      .join('; ');
    output.error(
      `error ${error.code}: ${error.message}${details ? ` [${details}]` : ''}${requestId}`,
    );
    return EXIT_FAILURE;
  }

  const message = error instanceof Error ? error.message : String(error);
  output.error(
    output.json ? JSON.stringify({ error: { code: 'CLI_ERROR', message } }) : `error: ${message}`,
  );
  return EXIT_FAILURE;
}

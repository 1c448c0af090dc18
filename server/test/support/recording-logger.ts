import type { Logger } from '../../src/logger.js';

/** A logger that records the level and message of each line. */
export function recordingLogger() {
  const lines: Array<[level: string, message: string]> = [];
  const at = (level: string) => (_fields: unknown, message: string) => lines.push([level, message]);
  const logger = { warn: at('warn'), error: at('error') } as unknown as Logger;
  return { logger, lines };
}

import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { survivingRejections } from '../../src/unhandled-rejections.js';

function fieldsLogger() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    lines.push({ level, fields, message });
  return { logger: { warn: at('warn'), error: at('error') } as unknown as Logger, lines };
}

describe('unhandled rejections in a serving process', () => {
  it('are counted and logged (throttled), never thrown', () => {
    let clock = 0;
    const { logger, lines } = fieldsLogger();
    const rejections = survivingRejections(logger, () => clock);
    // Before, the listener rethrew anything but a database fault: the process exited.
    expect(() => rejections.listener(new Error('ERR_HTTP_HEADERS_SENT'))).not.toThrow();
    rejections.listener(new Error('second'));
    rejections.listener(new Error('third'));
    clock += 1_000;
    rejections.listener(Object.assign(new Error('gone'), { code: 'CONNECTION_CLOSED' }));
    expect(rejections.total).toBe(4);
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['error', 'unhandled rejection; the process goes on'],
      ['warn', 'unhandled database fault ignored; the pool reconnects'],
    ]);
    expect(lines[1]?.fields).toMatchObject({ unhandled_rejections: 4, since_last_line: 3 });
  });
});

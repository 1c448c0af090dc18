import { describe, expect, it } from 'vitest';
import { timeWindowOf } from '../../src/text/time-window.js';

const reference = new Date('2026-03-15T12:00:00Z');
const windowOf = (query: string) => {
  const window = timeWindowOf(query, reference);
  return window && { from: window.from.toISOString(), to: window.to.toISOString() };
};

describe('timeWindowOf', () => {
  it('reads a month and year', () => {
    expect(windowOf('What did Omar cook in July 2022?')).toEqual({
      from: '2022-07-01T00:00:00.000Z',
      to: '2022-07-31T23:59:59.999Z',
    });
    expect(windowOf('plans for sept. 2019')).toMatchObject({ from: '2019-09-01T00:00:00.000Z' });
  });

  it('reads a month alone as the latest such month up to the reference', () => {
    // March 2026 is the reference month: October is last year's.
    expect(windowOf('Where did the team travel in October?')).toEqual({
      from: '2025-10-01T00:00:00.000Z',
      to: '2025-10-31T23:59:59.999Z',
    });
    expect(windowOf('what happened in March')).toMatchObject({
      from: '2026-03-01T00:00:00.000Z',
    });
  });

  it('reads the last or first week of a month', () => {
    expect(windowOf('Which book did Priya finish the last week of August 2023?')).toEqual({
      from: '2023-08-25T00:00:00.000Z',
      to: '2023-08-31T23:59:59.999Z',
    });
    expect(windowOf('the first week of January')).toEqual({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-07T23:59:59.999Z',
    });
  });

  it('reads "N units ago" around the reference, with half a unit of margin', () => {
    const window = timeWindowOf('What did I buy two weeks ago?', reference)!;
    expect(window.from.getTime()).toBe(reference.getTime() - 17.5 * 86_400_000);
    expect(window.to.getTime()).toBe(reference.getTime() - 10.5 * 86_400_000);
    expect(timeWindowOf('a month ago', reference)!.to.getTime()).toBeLessThan(reference.getTime());
    expect(timeWindowOf('3 days ago', reference)!.from.getTime()).toBe(
      reference.getTime() - 3.5 * 86_400_000,
    );
  });

  it('reads the last week, month or year and yesterday', () => {
    expect(timeWindowOf('what did we discuss last week', reference)).toEqual({
      from: new Date(reference.getTime() - 7 * 86_400_000),
      to: reference,
    });
    expect(windowOf('who called yesterday')).toEqual({
      from: '2026-03-14T00:00:00.000Z',
      to: '2026-03-14T23:59:59.999Z',
    });
  });

  it('reads a year', () => {
    expect(windowOf('Where did Sam live in 2021?')).toEqual({
      from: '2021-01-01T00:00:00.000Z',
      to: '2021-12-31T23:59:59.999Z',
    });
  });

  it('finds no period where none is named', () => {
    for (const query of [
      'Where does Jane live?',
      'May I ask what Lena plays?',
      'the march for climate',
      'call 2021 times',
      'What did she say last?',
    ])
      expect(windowOf(query), query).toBeUndefined();
  });
});

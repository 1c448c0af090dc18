import { describe, expect, it } from 'vitest';
import { assessVolatility } from '../../src/services/lifecycle/analysis.js';

const DAY = 86_400_000;
const from = new Date('2024-05-10T12:00:00Z');
const expiry = (text: string) => assessVolatility(text, 'note', from).expiresAt;

describe('volatility of time-bound wording', () => {
  it('lets a past event dated "today" or "this weekend" stay true', () => {
    expect(expiry('I went to a support group today')).toBeNull();
    expect(expiry('We finally painted the fence this weekend')).toBeNull();
  });

  it('still expires states and plans, whatever a word ending in -eed looks like', () => {
    expect(expiry('I need a quiet evening today')?.getTime()).toBe(from.getTime() + DAY);
    expect(expiry("I'm working from home today")?.getTime()).toBe(from.getTime() + DAY);
    expect(expiry('We visited the lake and go back tomorrow')?.getTime()).toBe(
      from.getTime() + 2 * DAY,
    );
  });
});

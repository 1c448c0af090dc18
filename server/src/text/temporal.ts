import { detectLanguage } from './language.js';

/**
 * Whether a query asks about the time of something ("When did we paint the fence?", "When is
 * Ana going camping?", "What year did she move?", "How long ago was the trip?"), by the
 * `timeQuestion` of the query's language. The answer is often a memory whose time-bound wording
 * has expired since (a plan for "next month", a state of "this week": see assessVolatility): it
 * is no longer current truth, but it is the record of that time, so such a question also sees
 * expired memories.
 */
export function asksAboutTime(query: string): boolean {
  return detectLanguage(query).timeQuestion?.test(query) ?? false;
}

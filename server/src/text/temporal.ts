/**
 * Whether a query asks about the time of something ("When did we paint the fence?", "When is
 * Ana going camping?", "What year did she move?", "How long ago was the trip?"). The answer is
 * often a memory whose time-bound wording has expired since (a plan for "next month", a state of
 * "this week": see assessVolatility): it is no longer current truth, but it is the record of
 * that time, so such a question also sees expired memories.
 */
const ASKS_ABOUT_TIME =
  /\b(?:when|since when|how long ago|what (?:date|day|time|year|month|week(?:end)?)|which (?:date|day|year|month|week(?:end)?))\b/i;

export function asksAboutTime(query: string): boolean {
  return ASKS_ABOUT_TIME.test(query);
}

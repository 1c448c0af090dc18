/**
 * Whether a query asks about the time of something ("When did we paint the fence?", "What
 * year did she move?", "How long ago was the trip?"): such a question is about the past as much
 * as the present, so a memory whose time-bound wording has expired (see assessVolatility) still
 * answers it.
 */
const ASKS_ABOUT_TIME =
  /\b(?:when|since when|how long ago|what (?:date|day|time|year|month|week(?:end)?)|which (?:date|day|year|month|week(?:end)?))\b/i;

export function asksAboutTime(query: string): boolean {
  return ASKS_ABOUT_TIME.test(query);
}
